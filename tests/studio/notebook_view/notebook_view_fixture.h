// Shared by the notebook view's QtTests: a shown NotebookView over a NotebookDocument built from sources.
#pragma once
#include "notebook/notebook_document.h"
#include "notebook_view/cell_widget.h"
#include "notebook_view/code_editor.h"
#include "notebook_view/notebook_view.h"

#include <QApplication>
#include <QTest>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rt::studio::testing {

struct CellSpec {
  CellType type;
  std::string source;
};

inline Notebook makeNotebook(const std::vector<CellSpec>& cells) {
  Notebook nb = Notebook::new_empty();
  nb.cells.clear();
  for (const CellSpec& c : cells) nb.cells.push_back(Cell::new_of_type(nb, c.type, c.source));
  return nb;
}

// A document and a visible view of it, the view focused in command mode on cell 0.
struct ShownNotebook {
  std::unique_ptr<NotebookDocument> doc;
  std::unique_ptr<NotebookView> view;

  explicit ShownNotebook(Notebook nb) {
    doc = std::make_unique<NotebookDocument>(std::move(nb));
    view = std::make_unique<NotebookView>();
    view->set_restart_confirmation([](QWidget*) { return true; });
    view->resize(900, 700);
    view->set_document(doc.get());
    view->show();
    view->activateWindow();
    QApplication::setActiveWindow(view.get());
    (void)QTest::qWaitForWindowExposed(view.get());
    view->setFocus();
    QApplication::processEvents();
  }
  ~ShownNotebook() {
    if (view) view->set_document(nullptr);
  }
  CellWidget* cell(int i) const { return view->cell_widget(i); }
  std::string source(std::size_t i) const { return doc->cell(i).source; }
  CellType type(std::size_t i) const { return doc->cell(i).type; }
  // Keys to the view itself (command mode).
  void key(Qt::Key k, Qt::KeyboardModifiers m = Qt::NoModifier) { QTest::keyClick(view.get(), k, m); }
  // Keys to the active cell's editor (edit mode).
  void editorKey(Qt::Key k, Qt::KeyboardModifiers m = Qt::NoModifier) {
    QTest::keyClick(cell(view->active_index())->editor(), k, m);
  }
  void typeText(const char* text) { QTest::keyClicks(cell(view->active_index())->editor(), QString::fromUtf8(text)); }
};

}  // namespace rt::studio::testing
