// app/studio/notebook_view/notebook_view.h — the notebook editor: cells on a scrolling page, Jupyter's command
// and edit modes and shortcuts, and running cells on the kernel.
//
//   auto doc = std::make_unique<rt::studio::NotebookDocument>(rt::studio::NotebookDocument::open(path));
//   auto* view = new rt::studio::NotebookView(main_window);
//   view->set_document(doc.get());       // not owned: detach (set_document(nullptr)) before destroying it
//   view->set_kernel(kernel_client);     // not owned
//   connect(view, &NotebookView::aboutToRun, autosave, &Autosaver::save_now);  // before every run
//   connect(view, &NotebookView::modifiedChanged, window, &QWidget::setWindowModified);
//   run_menu->addAction(tr("Run All"), view, &NotebookView::runAll);
//   QImage shot = view->render_to_image();  // the screenshot test
//
// Modes and keys (CommandModeKeymap has the table):
// - Command mode (Esc; the active cell has a blue bar): keys act on cells — A/B insert, D,D delete, M/Y/R
//   change type, Z/Shift+Z undo/redo structural edits (the document's history), Up/Down/J/K select,
//   Shift+Up/Down extend the selection, C/X/V copy/cut/paste, Shift+M merge, I,I interrupt, 0,0 restart
//   (after confirmation), O collapse outputs, Enter edits.
// - Edit mode (Enter, or a click into the editor; green bar): keys go to the editor except Shift+Enter
//   (run, select next; past the last cell a new code cell is appended and edited), Ctrl+Enter (run in place),
//   Alt+Enter (run, insert a cell below), Ctrl+Shift+- (split at the cursor) and Esc.
// - In edit mode Up on an editor's first line and Down on its last move into the neighbouring cell's editor, and
//   the page scrolls to keep the caret in view.
// - Markdown cells show rendered text until edited; running them (Shift+Enter) renders them again.
//
// Contracts:
// - Every edit goes through the NotebookDocument (typing included: set_source per change), and every document
//   change, whoever made it, is shown: the view listens to the document and updates only the cells that changed.
//   Outputs written while cells run are redrawn at most every kOutputFlushInterval (coalesced), so an output
//   flood cannot freeze the GUI; flushOutputs() redraws at once.
// - Running is NotebookExecution's (see notebook_execution.h): outputs and execution counts land in the
//   document; an error or an interrupt stops the cells queued behind it.
// - Public slots never throw: failures (no kernel, nothing to paste) are reported through message().
// - Selection: one active cell plus an optional contiguous range (anchor .. active); commands act on the range.
#pragma once
#include "cell_command.h"
#include "command_mode_keymap.h"
#include "notebook/notebook_document.h"
#include "notebook/stream_accumulator.h"

#include <QImage>
#include <QPointer>
#include <QSet>
#include <QWidget>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

class QScrollArea;
class QTimer;
class QVBoxLayout;

namespace rt::studio {

class CellWidget;
class CodeEditor;
class KernelClient;
enum class ExecutionStatus;  // kernel/python_kernel.h
class NotebookExecution;

class NotebookView : public QWidget {
  Q_OBJECT

 public:
  static constexpr std::chrono::milliseconds kOutputFlushInterval{50};

  explicit NotebookView(QWidget* parent = nullptr);
  ~NotebookView() override;

  void set_document(NotebookDocument* document);
  NotebookDocument* document() const { return document_; }
  void set_kernel(KernelClient* kernel);
  KernelClient* kernel() const;
  NotebookExecution& execution() const { return *execution_; }
  // Per-cell cap on stream text for later runs (default: StreamLimits' 1 MB).
  void set_stream_limits(StreamLimits limits);
  // Asked before 0,0 / restart(); answers true to restart. Default: a Yes/No QMessageBox.
  void set_restart_confirmation(std::function<bool(QWidget* parent)> confirm);

  EditorMode mode() const { return mode_; }
  int active_index() const { return active_; }  // -1 only without a document
  std::vector<std::size_t> selected_indices() const;
  int cell_count() const { return static_cast<int>(cells_.size()); }
  CellWidget* cell_widget(int index) const;
  bool is_busy() const;
  const CommandModeKeymap& keymap() const { return keymap_; }

  // The view as it is on screen (for the screenshot test and thumbnails).
  QImage render_to_image();

 public slots:
  void execute(rt::studio::CellCommand command);
  void runSelected();         // Shift+Enter
  void runSelectedInPlace();  // Ctrl+Enter
  void runAndInsertBelow();   // Alt+Enter
  void runAll();
  void runAbove();  // the cells above the active one
  void runBelow();  // the active cell and everything below
  void interrupt();
  void restart();      // asks first (set_restart_confirmation)
  void restartNow();   // no question
  void clearOutputs();     // selected cells
  void clearAllOutputs();
  void selectCell(int index);
  void enterEditMode();
  void enterCommandMode();
  void flushOutputs();

 signals:
  void modifiedChanged(bool modified);   // the document's is_dirty() flipped
  void documentEdited();                 // any change to the document
  void kernelBusyChanged(bool busy);     // cells queued or running / all done
  void selectionChanged(int active_index);
  void modeChanged(rt::studio::EditorMode mode);
  void aboutToRun();                     // before cells are queued (the shell autosaves here)
  void cellFinished(int index, rt::studio::ExecutionStatus status, double seconds);
  void message(const QString& text);     // something the user should read (status bar)

 protected:
  bool event(QEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // [Widgets]
  void rebuild_cells();
  CellWidget* create_cell_widget(std::size_t index);
  void insert_cell_widgets(std::size_t index, std::size_t count);
  void remove_cell_widgets(std::size_t index, std::size_t count);
  void replace_cell_widget(std::size_t index);
  void on_document_change(const DocumentChange& change);
  int index_of_cell(const std::string& cell_id) const;
  void refresh_run_state(const std::string& cell_id);
  void schedule_output_flush(const std::string& cell_id);
  // [Selection and modes]
  void set_active(int index, bool extend = false);
  void update_highlights();
  void scroll_to_active();
  void set_mode(EditorMode mode);
  bool handle_key(EditorMode mode, QKeyEvent* event);
  bool move_between_editors(CodeEditor* editor, QKeyEvent* event);
  // [Commands]
  void run_cells(const std::vector<std::size_t>& indices);
  void run_selection_then_move(bool insert_below);
  void insert_cell(bool below);
  void change_type(CellType type);
  void split_active();
  void merge_selected();
  void move_selection(bool up);
  void copy_selection(bool cut);
  void paste(bool above);
  void undo_redo(bool undo);
  void toggle_outputs();
  void guarded(const char* what, const std::function<void()>& action);

  NotebookDocument* document_ = nullptr;
  int listener_token_ = 0;
  bool last_dirty_ = false;
  std::unique_ptr<NotebookExecution> execution_;
  CommandModeKeymap keymap_;
  std::function<bool(QWidget*)> confirm_restart_;

  QScrollArea* scroll_ = nullptr;
  QWidget* page_ = nullptr;
  QVBoxLayout* page_layout_ = nullptr;
  std::vector<CellWidget*> cells_;

  EditorMode mode_ = EditorMode::Command;
  int active_ = -1;
  int anchor_ = -1;

  QTimer* output_timer_ = nullptr;
  QSet<QString> pending_output_cells_;
  std::map<std::string, QString> run_times_;  // by cell id: shown under the editor
};

}  // namespace rt::studio
