#include "notebook_view.h"

#include "cell_clipboard.h"
#include "cell_widget.h"
#include "code_editor.h"
#include "execution_queue.h"
#include "notebook_execution.h"

#include <QApplication>
#include <QKeyEvent>
#include <QMessageBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace rt::studio {

namespace {

QString runTimeText(ExecutionStatus status, double seconds) {
  const QString time = QString::fromStdString(formatRunTime(std::chrono::duration<double>(seconds)));
  switch (status) {
    case ExecutionStatus::ok: return time;
    case ExecutionStatus::error: return QObject::tr("%1, failed").arg(time);
    case ExecutionStatus::aborted:
      return seconds > 0 ? QObject::tr("interrupted after %1").arg(time) : QObject::tr("not run (cancelled)");
  }
  return time;
}

bool defaultRestartConfirmation(QWidget* parent) {
  return QMessageBox::question(parent, QObject::tr("Restart the kernel?"),
                               QObject::tr("Restarting clears every variable and stops the running cell."),
                               QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
}

}  // namespace

// [SECTION] Setup

NotebookView::NotebookView(QWidget* parent)
    : QWidget(parent), execution_(std::make_unique<NotebookExecution>()), confirmRestart_(defaultRestartConfirmation) {
  setFocusPolicy(Qt::StrongFocus);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  scroll_ = new QScrollArea(this);
  scroll_->setWidgetResizable(true);
  scroll_->setFocusPolicy(Qt::NoFocus);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  page_ = new QWidget(scroll_);
  page_->setObjectName(QStringLiteral("notebook-page"));
  page_->setAutoFillBackground(true);
  QPalette p = page_->palette();
  p.setColor(QPalette::Window, Qt::white);
  page_->setPalette(p);
  pageLayout_ = new QVBoxLayout(page_);
  pageLayout_->setContentsMargins(4, 8, 12, 8);
  pageLayout_->setSpacing(2);
  pageLayout_->addStretch(1);
  scroll_->setWidget(page_);
  layout->addWidget(scroll_);

  outputTimer_ = new QTimer(this);
  outputTimer_->setSingleShot(true);
  outputTimer_->setInterval(outputFlushInterval);
  connect(outputTimer_, &QTimer::timeout, this, &NotebookView::flushOutputs);

  connect(execution_.get(), &NotebookExecution::cellStateChanged, this, &NotebookView::refreshRunState);
  connect(execution_.get(), &NotebookExecution::cellFinished, this,
          [this](const std::string& id, ExecutionStatus status, double seconds) {
            runTimes_[id] = runTimeText(status, seconds);
            const int index = indexOfCell(id);
            if (index < 0) return;
            cells_[static_cast<std::size_t>(index)]->setRunTimeText(runTimes_[id]);
            emit cellFinished(index, status, seconds);
          });
  connect(execution_.get(), &NotebookExecution::cellErrorLine, this, [this](const std::string& id, int line) {
    const int index = indexOfCell(id);
    if (index < 0) return;
    if (CodeEditor* editor = cells_[static_cast<std::size_t>(index)]->editor()) editor->markErrorLine(line);
  });
  connect(execution_.get(), &NotebookExecution::busyChanged, this, &NotebookView::kernelBusyChanged);
  connect(execution_.get(), &NotebookExecution::message, this, &NotebookView::message);
}

NotebookView::~NotebookView() {
  if (document_) document_->remove_listener(listenerToken_);
}

void NotebookView::setDocument(NotebookDocument* document) {
  if (document_ == document) return;
  if (document_) document_->remove_listener(listenerToken_);
  execution_->setDocument(document);
  document_ = document;
  runTimes_.clear();
  pendingOutputCells_.clear();
  if (document_) {
    listenerToken_ = document_->add_listener([this](const DocumentChange& change) { onDocumentChange(change); });
    lastDirty_ = document_->is_dirty();
  }
  rebuildCells();
  setMode(EditorMode::Command);
  setActive(document_ && document_->cell_count() > 0 ? 0 : -1);
  emit modifiedChanged(document_ && document_->is_dirty());
}

void NotebookView::setKernel(KernelClient* kernel) { execution_->setKernel(kernel); }
KernelClient* NotebookView::kernel() const { return execution_->kernel(); }
void NotebookView::setStreamLimits(StreamLimits limits) { execution_->setStreamLimits(limits); }
void NotebookView::setRestartConfirmation(std::function<bool(QWidget*)> confirm) {
  confirmRestart_ = confirm ? std::move(confirm) : defaultRestartConfirmation;
}

bool NotebookView::isBusy() const { return execution_->busy(); }

CellWidget* NotebookView::cellWidget(int index) const {
  if (index < 0 || index >= cellCount()) return nullptr;
  return cells_[static_cast<std::size_t>(index)];
}

QImage NotebookView::renderToImage() {
  flushOutputs();
  page_->layout()->activate();
  return grab().toImage();
}

// [SECTION] Cell widgets follow the document

void NotebookView::rebuildCells() {
  page_->setUpdatesEnabled(false);
  removeCellWidgets(0, cells_.size());
  if (document_) insertCellWidgets(0, document_->cell_count());
  page_->setUpdatesEnabled(true);
}

CellWidget* NotebookView::createCellWidget(std::size_t index) {
  const Cell& cell = document_->cell(index);
  auto* w = new CellWidget(cell, page_);
  w->setEditorEventFilter(this);
  connect(w, &CellWidget::sourceEdited, this, [this](const std::string& id) {
    const int i = indexOfCell(id);
    if (i < 0 || !document_) return;
    const std::string text = cells_[static_cast<std::size_t>(i)]->editorSource();
    if (document_->cell(static_cast<std::size_t>(i)).source != text) {
      guarded("Editing the cell", [&] { document_->set_source(static_cast<std::size_t>(i), text); });
    }
  });
  connect(w, &CellWidget::pressed, this, [this](const std::string& id, Qt::KeyboardModifiers modifiers) {
    const int i = indexOfCell(id);
    if (i < 0) return;
    setActive(i, modifiers.testFlag(Qt::ShiftModifier));
    if (mode_ == EditorMode::Edit) setMode(EditorMode::Command);
    setFocus(Qt::MouseFocusReason);
  });
  connect(w, &CellWidget::editorFocused, this, [this](const std::string& id) {
    const int i = indexOfCell(id);
    if (i < 0) return;
    if (i != active_) setActive(i);
    setMode(EditorMode::Edit);
  });
  connect(w, &CellWidget::caretMoved, this, [this, w](const std::string&, const QRect& caret) {
    const QRect r(w->mapTo(page_, caret.topLeft()), caret.size());
    scroll_->ensureVisible(r.center().x(), r.center().y(), 0, r.height() * 2);
  });
  connect(w, &CellWidget::editRequested, this, [this](const std::string& id) {
    const int i = indexOfCell(id);
    if (i < 0) return;
    setActive(i);
    enterEditMode();
  });
  connect(w, &CellWidget::collapseToggleRequested, this, [this](const std::string& id) {
    const int i = indexOfCell(id);
    if (i < 0) return;
    setActive(i);
    toggleOutputs();
  });
  if (auto it = runTimes_.find(cell.id); it != runTimes_.end()) w->setRunTimeText(it->second);
  w->setRunState(execution_->stateOfCell(cell.id));
  return w;
}

void NotebookView::insertCellWidgets(std::size_t index, std::size_t count) {
  std::vector<CellWidget*> created;
  created.reserve(count);
  for (std::size_t k = 0; k < count; ++k) created.push_back(createCellWidget(index + k));
  cells_.insert(cells_.begin() + static_cast<std::ptrdiff_t>(index), created.begin(), created.end());
  for (std::size_t k = 0; k < count; ++k) pageLayout_->insertWidget(static_cast<int>(index + k), created[k]);
}

void NotebookView::removeCellWidgets(std::size_t index, std::size_t count) {
  const auto first = cells_.begin() + static_cast<std::ptrdiff_t>(index);
  for (auto it = first; it != first + static_cast<std::ptrdiff_t>(count); ++it) {
    pendingOutputCells_.remove(QString::fromStdString((*it)->cellId()));
    if ((*it)->hasFocus() || (*it)->isAncestorOf(QApplication::focusWidget())) setFocus(Qt::OtherFocusReason);
    pageLayout_->removeWidget(*it);
    (*it)->deleteLater();
    (*it)->hide();
  }
  cells_.erase(first, first + static_cast<std::ptrdiff_t>(count));
}

void NotebookView::replaceCellWidget(std::size_t index) {
  removeCellWidgets(index, 1);
  insertCellWidgets(index, 1);
}

void NotebookView::onDocumentChange(const DocumentChange& change) {
  switch (change.kind) {
    case DocumentChange::Kind::cells_replaced: {
      removeCellWidgets(change.index, change.removed);
      insertCellWidgets(change.index, change.inserted);
      if (active_ >= static_cast<int>(change.index + change.removed)) {
        active_ += static_cast<int>(change.inserted) - static_cast<int>(change.removed);
      } else if (active_ >= static_cast<int>(change.index)) {
        active_ = static_cast<int>(change.index);
        if (mode_ == EditorMode::Edit) setMode(EditorMode::Command);
      }
      active_ = std::clamp(active_, cellCount() > 0 ? 0 : -1, cellCount() - 1);
      anchor_ = active_;
      updateHighlights();
      break;
    }
    case DocumentChange::Kind::cell_moved: {
      CellWidget* w = cells_[change.index];
      cells_.erase(cells_.begin() + static_cast<std::ptrdiff_t>(change.index));
      cells_.insert(cells_.begin() + static_cast<std::ptrdiff_t>(change.to_index), w);
      pageLayout_->removeWidget(w);
      pageLayout_->insertWidget(static_cast<int>(change.to_index), w);
      updateHighlights();
      break;
    }
    case DocumentChange::Kind::cell_type: {
      const bool wasActive = static_cast<int>(change.index) == active_;
      replaceCellWidget(change.index);
      if (wasActive && mode_ == EditorMode::Edit) setMode(EditorMode::Command);
      updateHighlights();
      break;
    }
    case DocumentChange::Kind::source:
    case DocumentChange::Kind::cell_metadata:
      if (change.index < cells_.size()) cells_[change.index]->showCell(document_->cell(change.index));
      break;
    case DocumentChange::Kind::outputs:
      if (change.index < cells_.size()) {
        const Cell& cell = document_->cell(change.index);
        cells_[change.index]->showExecutionCount(cell.execution_count);
        scheduleOutputFlush(cell.id);
      }
      break;
    case DocumentChange::Kind::reloaded: {
      const int keep = active_;
      rebuildCells();
      setMode(EditorMode::Command);
      setActive(std::min(keep, cellCount() - 1));
      break;
    }
    case DocumentChange::Kind::notebook_metadata:
    case DocumentChange::Kind::saved:
      break;
  }
  emit documentEdited();
  if (document_ && document_->is_dirty() != lastDirty_) {
    lastDirty_ = document_->is_dirty();
    emit modifiedChanged(lastDirty_);
  }
}

int NotebookView::indexOfCell(const std::string& cellId) const {
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    if (cells_[i]->cellId() == cellId) return static_cast<int>(i);
  }
  return -1;
}

void NotebookView::refreshRunState(const std::string& cellId) {
  const int index = indexOfCell(cellId);
  if (index < 0) return;
  auto state = execution_->stateOfCell(cellId);
  CellWidget* w = cells_[static_cast<std::size_t>(index)];
  w->setRunState(state);
  if (state) w->setRunTimeText({});
}

void NotebookView::scheduleOutputFlush(const std::string& cellId) {
  pendingOutputCells_.insert(QString::fromStdString(cellId));
  if (!outputTimer_->isActive()) outputTimer_->start();
}

void NotebookView::flushOutputs() {
  outputTimer_->stop();
  if (!document_) {
    pendingOutputCells_.clear();
    return;
  }
  const QSet<QString> pending = std::exchange(pendingOutputCells_, {});
  for (const QString& id : pending) {
    const int index = indexOfCell(id.toStdString());
    if (index >= 0) cells_[static_cast<std::size_t>(index)]->showOutputs(document_->cell(static_cast<std::size_t>(index)));
  }
}

// [SECTION] Selection and modes

std::vector<std::size_t> NotebookView::selectedIndices() const {
  if (active_ < 0) return {};
  const int a = std::clamp(anchor_ < 0 ? active_ : anchor_, 0, cellCount() - 1);
  std::vector<std::size_t> out;
  for (int i = std::min(a, active_); i <= std::max(a, active_); ++i) out.push_back(static_cast<std::size_t>(i));
  return out;
}

void NotebookView::selectCell(int index) { setActive(index); }

void NotebookView::setActive(int index, bool extend) {
  if (cellCount() == 0) {
    active_ = anchor_ = -1;
    emit selectionChanged(active_);
    return;
  }
  index = std::clamp(index, 0, cellCount() - 1);
  const bool changed = index != active_;
  if (!extend || anchor_ < 0) anchor_ = index;
  active_ = index;
  updateHighlights();
  scrollToActive();
  if (changed || !extend) emit selectionChanged(active_);
}

void NotebookView::updateHighlights() {
  const auto selected = selectedIndices();
  const int lo = selected.empty() ? -1 : static_cast<int>(selected.front());
  const int hi = selected.empty() ? -1 : static_cast<int>(selected.back());
  for (int i = 0; i < cellCount(); ++i) {
    CellWidget::Highlight h = CellWidget::Highlight::None;
    if (i == active_) {
      h = mode_ == EditorMode::Edit ? CellWidget::Highlight::ActiveEdit : CellWidget::Highlight::ActiveCommand;
    } else if (i >= lo && i <= hi) {
      h = CellWidget::Highlight::Selected;
    }
    cells_[static_cast<std::size_t>(i)]->setHighlight(h);
  }
}

void NotebookView::scrollToActive() {
  QTimer::singleShot(0, this, [this, guard = QPointer<NotebookView>(this)] {
    if (!guard || active_ < 0 || active_ >= cellCount()) return;
    page_->layout()->activate();
    CellWidget* w = cells_[static_cast<std::size_t>(active_)];
    // Show the cell's top; a cell taller than the viewport is not scrolled past its start.
    const int top = w->y();
    const int bottom = std::min(w->y() + w->height(), top + scroll_->viewport()->height());
    QScrollBar* bar = scroll_->verticalScrollBar();
    if (top < bar->value()) bar->setValue(top - 8);
    else if (bottom > bar->value() + scroll_->viewport()->height()) bar->setValue(bottom - scroll_->viewport()->height() + 8);
  });
}

void NotebookView::setMode(EditorMode mode) {
  keymap_.reset();
  if (mode_ == mode) {
    updateHighlights();
    return;
  }
  mode_ = mode;
  updateHighlights();
  emit modeChanged(mode_);
}

void NotebookView::enterEditMode() {
  if (active_ < 0) return;
  setMode(EditorMode::Edit);
  cells_[static_cast<std::size_t>(active_)]->enterEditor(/*focus=*/true);
  scrollToActive();
}

void NotebookView::enterCommandMode() {
  setMode(EditorMode::Command);
  setFocus(Qt::OtherFocusReason);
}

// [SECTION] Keys

bool NotebookView::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (keymap_.wouldHandle(EditorMode::Command, key->keyCombination(), CommandModeKeymap::Clock::now())) {
      event->accept();
      return true;
    }
  }
  return QWidget::event(event);
}

void NotebookView::focusInEvent(QFocusEvent* event) {
  QWidget::focusInEvent(event);
  setMode(EditorMode::Command);  // the view itself has focus only in command mode
}

void NotebookView::keyPressEvent(QKeyEvent* event) {
  if (!handleKey(EditorMode::Command, event)) QWidget::keyPressEvent(event);
}

bool NotebookView::eventFilter(QObject* watched, QEvent* event) {
  if (qobject_cast<CodeEditor*>(watched)) {
    if (event->type() == QEvent::ShortcutOverride) {
      auto* key = static_cast<QKeyEvent*>(event);
      if (keymap_.wouldHandle(EditorMode::Edit, key->keyCombination(), CommandModeKeymap::Clock::now())) {
        event->accept();
        return true;
      }
    } else if (event->type() == QEvent::KeyPress) {
      auto* key = static_cast<QKeyEvent*>(event);
      if (handleKey(EditorMode::Edit, key)) return true;
      if (moveBetweenEditors(static_cast<CodeEditor*>(watched), key)) return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

// Like JupyterLab: Up on an editor's first line edits the cell above (caret on its last line), Down on the last
// line edits the cell below.
bool NotebookView::moveBetweenEditors(CodeEditor* editor, QKeyEvent* event) {
  if (event->modifiers() != Qt::NoModifier || active_ < 0) return false;
  const bool up = event->key() == Qt::Key_Up, down = event->key() == Qt::Key_Down;
  if ((!up && !down) || cells_[static_cast<std::size_t>(active_)]->editor() != editor) return false;
  if ((up && (!editor->caretOnFirstLine() || active_ == 0)) ||
      (down && (!editor->caretOnLastLine() || active_ + 1 >= cellCount()))) {
    return false;
  }
  setActive(active_ + (up ? -1 : 1));
  enterEditMode();
  if (CodeEditor* next = cells_[static_cast<std::size_t>(active_)]->editor()) {
    if (up) next->setCursorPosition(std::max(0, next->lines() - 1), 0);
    else next->setCursorPosition(0, 0);
  }
  return true;
}

bool NotebookView::handleKey(EditorMode mode, QKeyEvent* event) {
  if (!document_) return false;
  const auto result = keymap_.press(mode, event->keyCombination(), CommandModeKeymap::Clock::now());
  if (result.outcome == CommandModeKeymap::Outcome::NotHandled) return false;
  event->accept();
  if (result.outcome == CommandModeKeymap::Outcome::Matched) execute(result.command);
  return true;
}

// [SECTION] Commands

void NotebookView::guarded(const char* what, const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& e) {
    emit message(tr("%1 failed: %2").arg(tr(what), QString::fromUtf8(e.what())));
  }
}

void NotebookView::execute(CellCommand command) {
  if (!document_) return;
  using C = CellCommand;
  guarded("The notebook command", [&] {
    switch (command) {
      case C::RunAndSelectNext: runSelectionThenMove(false); break;
      case C::RunInPlace: runSelectedInPlace(); break;
      case C::RunAndInsertBelow: runSelectionThenMove(true); break;
      case C::Interrupt: interrupt(); break;
      case C::Restart: restart(); break;
      case C::EnterEditMode: enterEditMode(); break;
      case C::EnterCommandMode: enterCommandMode(); break;
      case C::SelectPrevious: setActive(active_ - 1); break;
      case C::SelectNext: setActive(active_ + 1); break;
      case C::ExtendSelectionUp: setActive(active_ - 1, true); break;
      case C::ExtendSelectionDown: setActive(active_ + 1, true); break;
      case C::SelectAll:
        anchor_ = 0;
        setActive(cellCount() - 1, true);
        break;
      case C::InsertAbove: insertCell(false); break;
      case C::InsertBelow: insertCell(true); break;
      case C::DeleteSelected: {
        const std::size_t next = document_->delete_cells(selectedIndices());
        setActive(static_cast<int>(next));
        break;
      }
      case C::ToCode: changeType(CellType::code); break;
      case C::ToMarkdown: changeType(CellType::markdown); break;
      case C::ToRaw: changeType(CellType::raw); break;
      case C::SplitAtCursor: splitActive(); break;
      case C::MergeSelected: mergeSelected(); break;
      case C::MoveUp: moveSelection(true); break;
      case C::MoveDown: moveSelection(false); break;
      case C::Copy: copySelection(false); break;
      case C::Cut: copySelection(true); break;
      case C::PasteBelow: paste(false); break;
      case C::PasteAbove: paste(true); break;
      case C::Undo: undoRedo(true); break;
      case C::Redo: undoRedo(false); break;
      case C::ClearOutputs: clearOutputs(); break;
      case C::ToggleOutputs: toggleOutputs(); break;
    }
  });
}

void NotebookView::runCells(const std::vector<std::size_t>& indices) {
  if (!document_) return;
  std::vector<std::string> ids;
  bool anyCode = false;
  for (std::size_t i : indices) {
    if (i >= cells_.size()) continue;
    const Cell& cell = document_->cell(i);
    if (cell.type == CellType::markdown) cells_[i]->leaveEditor();
    if (cell.is_code()) anyCode = true;
    ids.push_back(cell.id);
  }
  if (!anyCode) return;
  emit aboutToRun();
  execution_->run(ids);
}

void NotebookView::runSelected() { runSelectionThenMove(false); }

void NotebookView::runSelectedInPlace() {
  runCells(selectedIndices());
  if (mode_ == EditorMode::Edit) enterCommandMode();
}

void NotebookView::runAndInsertBelow() { runSelectionThenMove(true); }

void NotebookView::runSelectionThenMove(bool insertBelow) {
  const auto selected = selectedIndices();
  if (selected.empty()) return;
  runCells(selected);
  const std::size_t next = selected.back() + 1;
  if (insertBelow || next >= document_->cell_count()) {
    const std::size_t inserted = document_->insert_cell(next, CellType::code);
    setActive(static_cast<int>(inserted));
    enterEditMode();
  } else {
    setActive(static_cast<int>(next));
    enterCommandMode();
  }
}

void NotebookView::runAll() {
  if (!document_) return;
  std::vector<std::size_t> all(document_->cell_count());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  runCells(all);
}

void NotebookView::runAbove() {
  std::vector<std::size_t> above;
  for (int i = 0; i < active_; ++i) above.push_back(static_cast<std::size_t>(i));
  runCells(above);
}

void NotebookView::runBelow() {
  std::vector<std::size_t> below;
  for (int i = std::max(active_, 0); i < cellCount(); ++i) below.push_back(static_cast<std::size_t>(i));
  runCells(below);
}

void NotebookView::interrupt() { execution_->interrupt(); }

void NotebookView::restart() {
  if (confirmRestart_(this)) restartNow();
}

void NotebookView::restartNow() { execution_->restart(); }

void NotebookView::clearOutputs() {
  if (!document_) return;
  std::vector<std::size_t> code;
  for (std::size_t i : selectedIndices()) {
    if (document_->cell(i).is_code()) code.push_back(i);
  }
  if (code.empty()) return;
  guarded("Clearing outputs", [&] { document_->clear_outputs(code); });
  for (std::size_t i : code) {
    runTimes_.erase(document_->cell(i).id);
    cells_[i]->setRunTimeText({});
  }
}

void NotebookView::clearAllOutputs() {
  if (!document_) return;
  guarded("Clearing outputs", [&] { document_->clear_outputs({}); });
  runTimes_.clear();
  for (CellWidget* w : cells_) w->setRunTimeText({});
}

void NotebookView::insertCell(bool below) {
  const std::size_t at = active_ < 0 ? 0 : static_cast<std::size_t>(active_ + (below ? 1 : 0));
  const std::size_t index = document_->insert_cell(at, CellType::code);
  setActive(static_cast<int>(index));
  enterCommandMode();
}

void NotebookView::changeType(CellType type) {
  const auto selected = selectedIndices();
  const int keepActive = active_, keepAnchor = anchor_;
  document_->change_cell_type(selected, type);
  active_ = keepActive;
  anchor_ = keepAnchor;
  // Like Jupyter, a cell just turned into markdown shows its source until it is run.
  if (type == CellType::markdown) {
    for (std::size_t i : selected) cells_[i]->enterEditor(/*focus=*/false);
  }
  updateHighlights();
}

void NotebookView::splitActive() {
  if (active_ < 0) return;
  CellWidget* w = cells_[static_cast<std::size_t>(active_)];
  if (!w->editor() || w->isRendered()) {
    emit message(tr("Edit the cell and place the cursor where it should be split (Ctrl+Shift+-)."));
    return;
  }
  const int offset = w->editor()->cursorOffset();
  const std::size_t second = document_->split_cell(static_cast<std::size_t>(active_), static_cast<std::size_t>(offset));
  setActive(static_cast<int>(second));
  enterEditMode();
  if (CodeEditor* e = cells_[second]->editor()) e->setCursorOffset(0);
}

void NotebookView::mergeSelected() {
  const auto selected = selectedIndices();
  std::size_t first = selected.front(), count = selected.size();
  if (count < 2) {
    if (first + 1 >= document_->cell_count()) {
      emit message(tr("There is no cell below to merge with."));
      return;
    }
    count = 2;
  }
  const std::size_t merged = document_->merge_cells(first, count);
  setActive(static_cast<int>(merged));
}

void NotebookView::moveSelection(bool up) {
  const auto selected = selectedIndices();
  if (selected.empty()) return;
  const std::size_t first = selected.front();
  const std::size_t moved =
      up ? document_->move_cells_up(first, selected.size()) : document_->move_cells_down(first, selected.size());
  const int delta = static_cast<int>(moved) - static_cast<int>(first);
  active_ += delta;
  anchor_ += delta;
  updateHighlights();
  scrollToActive();
  emit selectionChanged(active_);
}

void NotebookView::copySelection(bool cut) {
  const auto selected = selectedIndices();
  if (selected.empty()) return;
  CellClipboard::put(document_->copy_cells(selected));
  if (cut) setActive(static_cast<int>(document_->delete_cells(selected)));
}

void NotebookView::paste(bool above) {
  const std::vector<Cell> cells = CellClipboard::take();
  if (cells.empty()) {
    emit message(tr("Nothing to paste: copy cells first (C in command mode)."));
    return;
  }
  const std::size_t at = active_ < 0 ? 0 : static_cast<std::size_t>(active_ + (above ? 0 : 1));
  const std::size_t first = document_->paste_cells(at, cells);
  anchor_ = static_cast<int>(first);
  setActive(static_cast<int>(first + cells.size() - 1), /*extend=*/true);
}

void NotebookView::undoRedo(bool undo) {
  const auto select = undo ? document_->undo() : document_->redo();
  if (!select) {
    emit message(undo ? tr("Nothing to undo.") : tr("Nothing to redo."));
    return;
  }
  setActive(static_cast<int>(*select));
}

void NotebookView::toggleOutputs() {
  std::vector<std::size_t> code;
  for (std::size_t i : selectedIndices()) {
    if (document_->cell(i).is_code()) code.push_back(i);
  }
  if (code.empty()) return;
  const bool hide = !outputsHidden(document_->cell(code.front()).metadata);
  for (std::size_t i : code) document_->set_cell_metadata(i, withOutputsHidden(document_->cell(i).metadata, hide));
}

}  // namespace rt::studio
