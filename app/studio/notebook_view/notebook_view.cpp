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

QString run_time_text(ExecutionStatus status, double seconds) {
  const QString time = QString::fromStdString(format_run_time(std::chrono::duration<double>(seconds)));
  switch (status) {
    case ExecutionStatus::ok: return time;
    case ExecutionStatus::error: return QObject::tr("%1, failed").arg(time);
    case ExecutionStatus::aborted:
      return seconds > 0 ? QObject::tr("interrupted after %1").arg(time) : QObject::tr("not run (cancelled)");
  }
  return time;
}

bool default_restart_confirmation(QWidget* parent) {
  return QMessageBox::question(parent, QObject::tr("Restart the kernel?"),
                               QObject::tr("Restarting clears every variable and stops the running cell."),
                               QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
}

}  // namespace

// [SECTION] Setup

NotebookView::NotebookView(QWidget* parent)
    : QWidget(parent),
      execution_(std::make_unique<NotebookExecution>()),
      confirm_restart_(default_restart_confirmation) {
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
  page_layout_ = new QVBoxLayout(page_);
  page_layout_->setContentsMargins(4, 8, 12, 8);
  page_layout_->setSpacing(2);
  page_layout_->addStretch(1);
  scroll_->setWidget(page_);
  layout->addWidget(scroll_);

  output_timer_ = new QTimer(this);
  output_timer_->setSingleShot(true);
  output_timer_->setInterval(kOutputFlushInterval);
  connect(output_timer_, &QTimer::timeout, this, &NotebookView::flushOutputs);

  connect(execution_.get(), &NotebookExecution::cellStateChanged, this, &NotebookView::refresh_run_state);
  connect(execution_.get(), &NotebookExecution::cellFinished, this,
          [this](const std::string& id, ExecutionStatus status, double seconds) {
            run_times_[id] = run_time_text(status, seconds);
            const int index = index_of_cell(id);
            if (index < 0) return;
            cells_[static_cast<std::size_t>(index)]->set_run_time_text(run_times_[id]);
            emit cellFinished(index, status, seconds);
          });
  connect(execution_.get(), &NotebookExecution::cellErrorLine, this, [this](const std::string& id, int line) {
    const int index = index_of_cell(id);
    if (index < 0) return;
    if (CodeEditor* editor = cells_[static_cast<std::size_t>(index)]->editor()) editor->mark_error_line(line);
  });
  connect(execution_.get(), &NotebookExecution::busyChanged, this, &NotebookView::kernelBusyChanged);
  connect(execution_.get(), &NotebookExecution::message, this, &NotebookView::message);
}

NotebookView::~NotebookView() {
  if (document_) document_->remove_listener(listener_token_);
}

void NotebookView::set_document(NotebookDocument* document) {
  if (document_ == document) return;
  if (document_) document_->remove_listener(listener_token_);
  execution_->set_document(document);
  document_ = document;
  run_times_.clear();
  pending_output_cells_.clear();
  if (document_) {
    listener_token_ = document_->add_listener([this](const DocumentChange& change) { on_document_change(change); });
    last_dirty_ = document_->is_dirty();
  }
  rebuild_cells();
  set_mode(EditorMode::Command);
  set_active(document_ && document_->cell_count() > 0 ? 0 : -1);
  emit modifiedChanged(document_ && document_->is_dirty());
}

void NotebookView::set_kernel(KernelClient* kernel) { execution_->set_kernel(kernel); }
KernelClient* NotebookView::kernel() const { return execution_->kernel(); }
void NotebookView::set_stream_limits(StreamLimits limits) { execution_->set_stream_limits(limits); }
void NotebookView::set_restart_confirmation(std::function<bool(QWidget*)> confirm) {
  confirm_restart_ = confirm ? std::move(confirm) : default_restart_confirmation;
}

bool NotebookView::is_busy() const { return execution_->busy(); }

CellWidget* NotebookView::cell_widget(int index) const {
  if (index < 0 || index >= cell_count()) return nullptr;
  return cells_[static_cast<std::size_t>(index)];
}

QImage NotebookView::render_to_image() {
  flushOutputs();
  page_->layout()->activate();
  return grab().toImage();
}

// [SECTION] Cell widgets follow the document

void NotebookView::rebuild_cells() {
  page_->setUpdatesEnabled(false);
  remove_cell_widgets(0, cells_.size());
  if (document_) insert_cell_widgets(0, document_->cell_count());
  page_->setUpdatesEnabled(true);
}

CellWidget* NotebookView::create_cell_widget(std::size_t index) {
  const Cell& cell = document_->cell(index);
  auto* w = new CellWidget(cell, page_);
  w->set_editor_event_filter(this);
  connect(w, &CellWidget::sourceEdited, this, [this](const std::string& id) {
    const int i = index_of_cell(id);
    if (i < 0 || !document_) return;
    const std::string text = cells_[static_cast<std::size_t>(i)]->editor_source();
    if (document_->cell(static_cast<std::size_t>(i)).source != text) {
      guarded("Editing the cell", [&] { document_->set_source(static_cast<std::size_t>(i), text); });
    }
  });
  connect(w, &CellWidget::pressed, this, [this](const std::string& id, Qt::KeyboardModifiers modifiers) {
    const int i = index_of_cell(id);
    if (i < 0) return;
    set_active(i, modifiers.testFlag(Qt::ShiftModifier));
    if (mode_ == EditorMode::Edit) set_mode(EditorMode::Command);
    setFocus(Qt::MouseFocusReason);
  });
  connect(w, &CellWidget::editorFocused, this, [this](const std::string& id) {
    const int i = index_of_cell(id);
    if (i < 0) return;
    if (i != active_) set_active(i);
    set_mode(EditorMode::Edit);
  });
  connect(w, &CellWidget::caretMoved, this, [this, w](const std::string&, const QRect& caret) {
    const QRect r(w->mapTo(page_, caret.topLeft()), caret.size());
    scroll_->ensureVisible(r.center().x(), r.center().y(), 0, r.height() * 2);
  });
  connect(w, &CellWidget::editRequested, this, [this](const std::string& id) {
    const int i = index_of_cell(id);
    if (i < 0) return;
    set_active(i);
    enterEditMode();
  });
  connect(w, &CellWidget::collapseToggleRequested, this, [this](const std::string& id) {
    const int i = index_of_cell(id);
    if (i < 0) return;
    set_active(i);
    toggle_outputs();
  });
  if (auto it = run_times_.find(cell.id); it != run_times_.end()) w->set_run_time_text(it->second);
  w->set_run_state(execution_->state_of_cell(cell.id));
  return w;
}

void NotebookView::insert_cell_widgets(std::size_t index, std::size_t count) {
  std::vector<CellWidget*> created;
  created.reserve(count);
  for (std::size_t k = 0; k < count; ++k) created.push_back(create_cell_widget(index + k));
  cells_.insert(cells_.begin() + static_cast<std::ptrdiff_t>(index), created.begin(), created.end());
  for (std::size_t k = 0; k < count; ++k) page_layout_->insertWidget(static_cast<int>(index + k), created[k]);
}

void NotebookView::remove_cell_widgets(std::size_t index, std::size_t count) {
  const auto first = cells_.begin() + static_cast<std::ptrdiff_t>(index);
  for (auto it = first; it != first + static_cast<std::ptrdiff_t>(count); ++it) {
    pending_output_cells_.remove(QString::fromStdString((*it)->cell_id()));
    if ((*it)->hasFocus() || (*it)->isAncestorOf(QApplication::focusWidget())) setFocus(Qt::OtherFocusReason);
    page_layout_->removeWidget(*it);
    (*it)->deleteLater();
    (*it)->hide();
  }
  cells_.erase(first, first + static_cast<std::ptrdiff_t>(count));
}

void NotebookView::replace_cell_widget(std::size_t index) {
  remove_cell_widgets(index, 1);
  insert_cell_widgets(index, 1);
}

void NotebookView::on_document_change(const DocumentChange& change) {
  switch (change.kind) {
    case DocumentChange::Kind::cells_replaced: {
      remove_cell_widgets(change.index, change.removed);
      insert_cell_widgets(change.index, change.inserted);
      if (active_ >= static_cast<int>(change.index + change.removed)) {
        active_ += static_cast<int>(change.inserted) - static_cast<int>(change.removed);
      } else if (active_ >= static_cast<int>(change.index)) {
        active_ = static_cast<int>(change.index);
        if (mode_ == EditorMode::Edit) set_mode(EditorMode::Command);
      }
      active_ = std::clamp(active_, cell_count() > 0 ? 0 : -1, cell_count() - 1);
      anchor_ = active_;
      update_highlights();
      break;
    }
    case DocumentChange::Kind::cell_moved: {
      CellWidget* w = cells_[change.index];
      cells_.erase(cells_.begin() + static_cast<std::ptrdiff_t>(change.index));
      cells_.insert(cells_.begin() + static_cast<std::ptrdiff_t>(change.to_index), w);
      page_layout_->removeWidget(w);
      page_layout_->insertWidget(static_cast<int>(change.to_index), w);
      update_highlights();
      break;
    }
    case DocumentChange::Kind::cell_type: {
      const bool was_active = static_cast<int>(change.index) == active_;
      replace_cell_widget(change.index);
      if (was_active && mode_ == EditorMode::Edit) set_mode(EditorMode::Command);
      update_highlights();
      break;
    }
    case DocumentChange::Kind::source:
    case DocumentChange::Kind::cell_metadata:
      if (change.index < cells_.size()) cells_[change.index]->show_cell(document_->cell(change.index));
      break;
    case DocumentChange::Kind::outputs:
      if (change.index < cells_.size()) {
        const Cell& cell = document_->cell(change.index);
        cells_[change.index]->show_execution_count(cell.execution_count);
        schedule_output_flush(cell.id);
      }
      break;
    case DocumentChange::Kind::reloaded: {
      const int keep = active_;
      rebuild_cells();
      set_mode(EditorMode::Command);
      set_active(std::min(keep, cell_count() - 1));
      break;
    }
    case DocumentChange::Kind::notebook_metadata:
    case DocumentChange::Kind::saved:
      break;
  }
  emit documentEdited();
  if (document_ && document_->is_dirty() != last_dirty_) {
    last_dirty_ = document_->is_dirty();
    emit modifiedChanged(last_dirty_);
  }
}

int NotebookView::index_of_cell(const std::string& cell_id) const {
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    if (cells_[i]->cell_id() == cell_id) return static_cast<int>(i);
  }
  return -1;
}

void NotebookView::refresh_run_state(const std::string& cell_id) {
  const int index = index_of_cell(cell_id);
  if (index < 0) return;
  auto state = execution_->state_of_cell(cell_id);
  CellWidget* w = cells_[static_cast<std::size_t>(index)];
  w->set_run_state(state);
  if (state) w->set_run_time_text({});
}

void NotebookView::schedule_output_flush(const std::string& cell_id) {
  pending_output_cells_.insert(QString::fromStdString(cell_id));
  if (!output_timer_->isActive()) output_timer_->start();
}

void NotebookView::flushOutputs() {
  output_timer_->stop();
  if (!document_) {
    pending_output_cells_.clear();
    return;
  }
  const QSet<QString> pending = std::exchange(pending_output_cells_, {});
  for (const QString& id : pending) {
    const int index = index_of_cell(id.toStdString());
    if (index >= 0) cells_[static_cast<std::size_t>(index)]->show_outputs(document_->cell(static_cast<std::size_t>(index)));
  }
}

// [SECTION] Selection and modes

std::vector<std::size_t> NotebookView::selected_indices() const {
  if (active_ < 0) return {};
  const int a = std::clamp(anchor_ < 0 ? active_ : anchor_, 0, cell_count() - 1);
  std::vector<std::size_t> out;
  for (int i = std::min(a, active_); i <= std::max(a, active_); ++i) out.push_back(static_cast<std::size_t>(i));
  return out;
}

void NotebookView::selectCell(int index) { set_active(index); }

void NotebookView::set_active(int index, bool extend) {
  if (cell_count() == 0) {
    active_ = anchor_ = -1;
    emit selectionChanged(active_);
    return;
  }
  index = std::clamp(index, 0, cell_count() - 1);
  const bool changed = index != active_;
  if (!extend || anchor_ < 0) anchor_ = index;
  active_ = index;
  update_highlights();
  scroll_to_active();
  if (changed || !extend) emit selectionChanged(active_);
}

void NotebookView::update_highlights() {
  const auto selected = selected_indices();
  const int lo = selected.empty() ? -1 : static_cast<int>(selected.front());
  const int hi = selected.empty() ? -1 : static_cast<int>(selected.back());
  for (int i = 0; i < cell_count(); ++i) {
    CellWidget::Highlight h = CellWidget::Highlight::None;
    if (i == active_) {
      h = mode_ == EditorMode::Edit ? CellWidget::Highlight::ActiveEdit : CellWidget::Highlight::ActiveCommand;
    } else if (i >= lo && i <= hi) {
      h = CellWidget::Highlight::Selected;
    }
    cells_[static_cast<std::size_t>(i)]->set_highlight(h);
  }
}

void NotebookView::scroll_to_active() {
  QTimer::singleShot(0, this, [this, guard = QPointer<NotebookView>(this)] {
    if (!guard || active_ < 0 || active_ >= cell_count()) return;
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

void NotebookView::set_mode(EditorMode mode) {
  keymap_.reset();
  if (mode_ == mode) {
    update_highlights();
    return;
  }
  mode_ = mode;
  update_highlights();
  emit modeChanged(mode_);
}

void NotebookView::enterEditMode() {
  if (active_ < 0) return;
  set_mode(EditorMode::Edit);
  cells_[static_cast<std::size_t>(active_)]->enter_editor(/*focus=*/true);
  scroll_to_active();
}

void NotebookView::enterCommandMode() {
  set_mode(EditorMode::Command);
  setFocus(Qt::OtherFocusReason);
}

// [SECTION] Keys

bool NotebookView::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    auto* key = static_cast<QKeyEvent*>(event);
    if (keymap_.would_handle(EditorMode::Command, key->keyCombination(), CommandModeKeymap::Clock::now())) {
      event->accept();
      return true;
    }
  }
  return QWidget::event(event);
}

void NotebookView::focusInEvent(QFocusEvent* event) {
  QWidget::focusInEvent(event);
  set_mode(EditorMode::Command);  // the view itself has focus only in command mode
}

void NotebookView::keyPressEvent(QKeyEvent* event) {
  if (!handle_key(EditorMode::Command, event)) QWidget::keyPressEvent(event);
}

bool NotebookView::eventFilter(QObject* watched, QEvent* event) {
  if (qobject_cast<CodeEditor*>(watched)) {
    if (event->type() == QEvent::ShortcutOverride) {
      auto* key = static_cast<QKeyEvent*>(event);
      if (keymap_.would_handle(EditorMode::Edit, key->keyCombination(), CommandModeKeymap::Clock::now())) {
        event->accept();
        return true;
      }
    } else if (event->type() == QEvent::KeyPress) {
      auto* key = static_cast<QKeyEvent*>(event);
      if (handle_key(EditorMode::Edit, key)) return true;
      if (move_between_editors(static_cast<CodeEditor*>(watched), key)) return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

// Like JupyterLab: Up on an editor's first line edits the cell above (caret on its last line), Down on the last
// line edits the cell below.
bool NotebookView::move_between_editors(CodeEditor* editor, QKeyEvent* event) {
  if (event->modifiers() != Qt::NoModifier || active_ < 0) return false;
  const bool up = event->key() == Qt::Key_Up, down = event->key() == Qt::Key_Down;
  if ((!up && !down) || cells_[static_cast<std::size_t>(active_)]->editor() != editor) return false;
  if ((up && (!editor->caret_on_first_line() || active_ == 0)) ||
      (down && (!editor->caret_on_last_line() || active_ + 1 >= cell_count()))) {
    return false;
  }
  set_active(active_ + (up ? -1 : 1));
  enterEditMode();
  if (CodeEditor* next = cells_[static_cast<std::size_t>(active_)]->editor()) {
    if (up) next->setCursorPosition(std::max(0, next->lines() - 1), 0);
    else next->setCursorPosition(0, 0);
  }
  return true;
}

bool NotebookView::handle_key(EditorMode mode, QKeyEvent* event) {
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
      case C::RunAndSelectNext: run_selection_then_move(false); break;
      case C::RunInPlace: runSelectedInPlace(); break;
      case C::RunAndInsertBelow: run_selection_then_move(true); break;
      case C::Interrupt: interrupt(); break;
      case C::Restart: restart(); break;
      case C::EnterEditMode: enterEditMode(); break;
      case C::EnterCommandMode: enterCommandMode(); break;
      case C::SelectPrevious: set_active(active_ - 1); break;
      case C::SelectNext: set_active(active_ + 1); break;
      case C::ExtendSelectionUp: set_active(active_ - 1, true); break;
      case C::ExtendSelectionDown: set_active(active_ + 1, true); break;
      case C::SelectAll:
        anchor_ = 0;
        set_active(cell_count() - 1, true);
        break;
      case C::InsertAbove: insert_cell(false); break;
      case C::InsertBelow: insert_cell(true); break;
      case C::DeleteSelected: {
        const std::size_t next = document_->delete_cells(selected_indices());
        set_active(static_cast<int>(next));
        break;
      }
      case C::ToCode: change_type(CellType::code); break;
      case C::ToMarkdown: change_type(CellType::markdown); break;
      case C::ToRaw: change_type(CellType::raw); break;
      case C::SplitAtCursor: split_active(); break;
      case C::MergeSelected: merge_selected(); break;
      case C::MoveUp: move_selection(true); break;
      case C::MoveDown: move_selection(false); break;
      case C::Copy: copy_selection(false); break;
      case C::Cut: copy_selection(true); break;
      case C::PasteBelow: paste(false); break;
      case C::PasteAbove: paste(true); break;
      case C::Undo: undo_redo(true); break;
      case C::Redo: undo_redo(false); break;
      case C::ClearOutputs: clearOutputs(); break;
      case C::ToggleOutputs: toggle_outputs(); break;
    }
  });
}

void NotebookView::run_cells(const std::vector<std::size_t>& indices) {
  if (!document_) return;
  std::vector<std::string> ids;
  bool any_code = false;
  for (std::size_t i : indices) {
    if (i >= cells_.size()) continue;
    const Cell& cell = document_->cell(i);
    if (cell.type == CellType::markdown) cells_[i]->leave_editor();
    if (cell.is_code()) any_code = true;
    ids.push_back(cell.id);
  }
  if (!any_code) return;
  emit aboutToRun();
  execution_->run(ids);
}

void NotebookView::runSelected() { run_selection_then_move(false); }

void NotebookView::runSelectedInPlace() {
  run_cells(selected_indices());
  if (mode_ == EditorMode::Edit) enterCommandMode();
}

void NotebookView::runAndInsertBelow() { run_selection_then_move(true); }

void NotebookView::run_selection_then_move(bool insert_below) {
  const auto selected = selected_indices();
  if (selected.empty()) return;
  run_cells(selected);
  const std::size_t next = selected.back() + 1;
  if (insert_below || next >= document_->cell_count()) {
    const std::size_t inserted = document_->insert_cell(next, CellType::code);
    set_active(static_cast<int>(inserted));
    enterEditMode();
  } else {
    set_active(static_cast<int>(next));
    enterCommandMode();
  }
}

void NotebookView::runAll() {
  if (!document_) return;
  std::vector<std::size_t> all(document_->cell_count());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  run_cells(all);
}

void NotebookView::runAbove() {
  std::vector<std::size_t> above;
  for (int i = 0; i < active_; ++i) above.push_back(static_cast<std::size_t>(i));
  run_cells(above);
}

void NotebookView::runBelow() {
  std::vector<std::size_t> below;
  for (int i = std::max(active_, 0); i < cell_count(); ++i) below.push_back(static_cast<std::size_t>(i));
  run_cells(below);
}

void NotebookView::interrupt() { execution_->interrupt(); }

void NotebookView::restart() {
  if (confirm_restart_(this)) restartNow();
}

void NotebookView::restartNow() { execution_->restart(); }

void NotebookView::clearOutputs() {
  if (!document_) return;
  std::vector<std::size_t> code;
  for (std::size_t i : selected_indices()) {
    if (document_->cell(i).is_code()) code.push_back(i);
  }
  if (code.empty()) return;
  guarded("Clearing outputs", [&] { document_->clear_outputs(code); });
  for (std::size_t i : code) {
    run_times_.erase(document_->cell(i).id);
    cells_[i]->set_run_time_text({});
  }
}

void NotebookView::clearAllOutputs() {
  if (!document_) return;
  guarded("Clearing outputs", [&] { document_->clear_outputs({}); });
  run_times_.clear();
  for (CellWidget* w : cells_) w->set_run_time_text({});
}

void NotebookView::insert_cell(bool below) {
  const std::size_t at = active_ < 0 ? 0 : static_cast<std::size_t>(active_ + (below ? 1 : 0));
  const std::size_t index = document_->insert_cell(at, CellType::code);
  set_active(static_cast<int>(index));
  enterCommandMode();
}

void NotebookView::change_type(CellType type) {
  const auto selected = selected_indices();
  const int keep_active = active_, keep_anchor = anchor_;
  document_->change_cell_type(selected, type);
  active_ = keep_active;
  anchor_ = keep_anchor;
  // Like Jupyter, a cell just turned into markdown shows its source until it is run.
  if (type == CellType::markdown) {
    for (std::size_t i : selected) cells_[i]->enter_editor(/*focus=*/false);
  }
  update_highlights();
}

void NotebookView::split_active() {
  if (active_ < 0) return;
  CellWidget* w = cells_[static_cast<std::size_t>(active_)];
  if (!w->editor() || w->is_rendered()) {
    emit message(tr("Edit the cell and place the cursor where it should be split (Ctrl+Shift+-)."));
    return;
  }
  const int offset = w->editor()->cursor_offset();
  const std::size_t second = document_->split_cell(static_cast<std::size_t>(active_), static_cast<std::size_t>(offset));
  set_active(static_cast<int>(second));
  enterEditMode();
  if (CodeEditor* e = cells_[second]->editor()) e->set_cursor_offset(0);
}

void NotebookView::merge_selected() {
  const auto selected = selected_indices();
  std::size_t first = selected.front(), count = selected.size();
  if (count < 2) {
    if (first + 1 >= document_->cell_count()) {
      emit message(tr("There is no cell below to merge with."));
      return;
    }
    count = 2;
  }
  const std::size_t merged = document_->merge_cells(first, count);
  set_active(static_cast<int>(merged));
}

void NotebookView::move_selection(bool up) {
  const auto selected = selected_indices();
  if (selected.empty()) return;
  const std::size_t first = selected.front();
  const std::size_t moved =
      up ? document_->move_cells_up(first, selected.size()) : document_->move_cells_down(first, selected.size());
  const int delta = static_cast<int>(moved) - static_cast<int>(first);
  active_ += delta;
  anchor_ += delta;
  update_highlights();
  scroll_to_active();
  emit selectionChanged(active_);
}

void NotebookView::copy_selection(bool cut) {
  const auto selected = selected_indices();
  if (selected.empty()) return;
  CellClipboard::put(document_->copy_cells(selected));
  if (cut) set_active(static_cast<int>(document_->delete_cells(selected)));
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
  set_active(static_cast<int>(first + cells.size() - 1), /*extend=*/true);
}

void NotebookView::undo_redo(bool undo) {
  const auto select = undo ? document_->undo() : document_->redo();
  if (!select) {
    emit message(undo ? tr("Nothing to undo.") : tr("Nothing to redo."));
    return;
  }
  set_active(static_cast<int>(*select));
}

void NotebookView::toggle_outputs() {
  std::vector<std::size_t> code;
  for (std::size_t i : selected_indices()) {
    if (document_->cell(i).is_code()) code.push_back(i);
  }
  if (code.empty()) return;
  const bool hide = !outputs_hidden(document_->cell(code.front()).metadata);
  for (std::size_t i : code) document_->set_cell_metadata(i, with_outputs_hidden(document_->cell(i).metadata, hide));
}

}  // namespace rt::studio
