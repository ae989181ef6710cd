// app/studio/notebook_view/cell_widget.h — one notebook cell on screen: prompt, editor or rendered markdown,
// run time and outputs. NotebookView creates one per cell and keeps it in step with the document.
//
//   auto* w = new rt::studio::CellWidget(doc.cell(i), parent);
//   w->setHighlight(CellWidget::Highlight::ActiveCommand);   // blue bar (command mode)
//   w->setRunState(ExecutionQueue::State::Running);           // "[*]:"
//   w->showCell(doc.cell(i));                                 // after the model changed
//   w->showOutputs(doc.cell(i));
//   w->enterEditor();                                         // markdown: rendered -> source editor
//
// Contracts:
// - A widget shows one cell id for its whole life; a type change makes NotebookView replace the widget.
// - showCell() replaces the editor's text only when it differs from the model, so typing (which reaches the
//   model through sourceEdited) never moves the caret.
// - Code cells: "[N]:" (or "[ ]:" never run, "[*]:" queued or running), the QScintilla editor, the run time
//   of the last run ("1.2 s"; also "0.3 s, failed", "interrupted after 2.0 s", "not run (cancelled)") below it,
//   then the outputs.
//   Markdown cells: rendered until edited (double-click, Enter), rendered again by leaveEditor().
//   Raw cells: a plain editor.
// - Outputs collapse when the cell's metadata says so (nbformat's "collapsed" or
//   metadata.jupyter.outputs_hidden), as JupyterLab writes it.
// - The widget never edits the document: it reports what the user did through its signals.
#pragma once
#include "execution_queue.h"
#include "notebook/notebook.h"

#include <QFrame>

#include <optional>
#include <string>

class QLabel;
class QVBoxLayout;

namespace rt::studio {

class CodeEditor;
class MarkdownView;
class OutputArea;

class CellWidget : public QFrame {
  Q_OBJECT

 public:
  enum class Highlight { None, Selected, ActiveCommand, ActiveEdit };

  explicit CellWidget(const Cell& cell, QWidget* parent = nullptr);
  ~CellWidget() override;

  const std::string& cellId() const { return cellId_; }
  CellType cellType() const { return type_; }

  void showCell(const Cell& cell);     // source, prompt, collapsed state
  void showOutputs(const Cell& cell);  // outputs (code cells)
  void showExecutionCount(std::optional<std::int64_t> count);
  // Key events of the editor (now and when created later) go through `filter` first (NotebookView's keymap).
  void setEditorEventFilter(QObject* filter);
  void setHighlight(Highlight highlight);
  Highlight highlight() const { return highlight_; }
  void setRunState(std::optional<ExecutionQueue::State> state);
  // Text under the editor after a run ("1.2 s"); empty hides it.
  void setRunTimeText(const QString& text);
  QString runTimeText() const;
  QString promptText() const;

  // Shows the editor (markdown: instead of the rendered text) and, when `focus`, focuses it.
  void enterEditor(bool focus = true);
  // Markdown: shows the rendered text again. Code/raw: nothing to do (the editor stays).
  void leaveEditor();
  bool isRendered() const;  // markdown shown rendered

  CodeEditor* editor() const { return editor_; }      // nullptr for a rendered markdown cell never edited
  MarkdownView* markdownView() const { return markdown_; }  // markdown cells only
  OutputArea* outputArea() const { return outputs_; }       // code cells only
  // The editor text as UTF-8 (the model's source), or the last shown source when no editor exists.
  std::string editorSource() const;

  // Width of the "[N]:" column, shared with the output prompts.
  static int promptColumnWidth();

 signals:
  void sourceEdited(const std::string& cellId);
  void pressed(const std::string& cellId, Qt::KeyboardModifiers modifiers);
  void editorFocused(const std::string& cellId);
  // The editor's caret moved; `caret` is its rectangle in this widget's coordinates.
  void caretMoved(const std::string& cellId, const QRect& caret);
  void editRequested(const std::string& cellId);
  void collapseToggleRequested(const std::string& cellId);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void ensureEditor();
  void updatePrompt();

  std::string cellId_;
  CellType type_;
  std::string source_;  // last source shown
  std::optional<std::int64_t> executionCount_;
  std::optional<ExecutionQueue::State> runState_;
  Highlight highlight_ = Highlight::None;
  bool settingText_ = false;
  QObject* editorFilter_ = nullptr;

  QLabel* prompt_ = nullptr;
  QVBoxLayout* body_ = nullptr;
  CodeEditor* editor_ = nullptr;
  MarkdownView* markdown_ = nullptr;
  QLabel* runTime_ = nullptr;
  OutputArea* outputs_ = nullptr;
};

// True if the cell's metadata asks for its outputs to be hidden ("collapsed": true or
// "jupyter": {"outputs_hidden": true}).
bool outputsHidden(const nlohmann::json& metadata);
// The metadata with the collapsed state set both ways JupyterLab writes it (and removed when shown).
nlohmann::json withOutputsHidden(nlohmann::json metadata, bool hidden);

}  // namespace rt::studio
