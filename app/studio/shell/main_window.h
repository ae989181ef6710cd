// app/studio/shell/main_window.h — the studio's window: the notebook in the middle, registered panels docked
// around it, File/Edit/View/Run/Kernel menus, a toolbar and a status bar with the kernel's state.
//
//   PanelRegistry panels;  register_builtin_panels(panels);
//   KernelClient kernel;                                   // one per process (kernel/qt/kernel_client.h)
//   MainWindow window(panels, kernel, {.autosave_interval_ms = 30000});
//   window.show();
//   window.open_file("train.ipynb");                       // asks about unsaved changes first
//   window.document()->is_dirty();  window.view()->runAll();
//
// [SECTION] index of main_window.cpp: construction, panels and layout, menus and toolbar, document lifecycle,
// saving, closing, status.
//
// Contracts:
// - One notebook per window. Open / New / Close / Open Recent / quit over a modified notebook ask Save / Discard /
//   Cancel first (shell/prompts.h); Cancel, or a Save that fails, leaves everything as it was.
// - A notebook that cannot be opened (corrupt, not a notebook, unreadable) or saved (unwritable place, disk full)
//   is reported in a message box naming the file, the problem and the fix; the open notebook stays open and
//   keeps its modified mark (shell/notebook_file.h).
// - The title is "<file name>[*] — RustyTorch++ Studio"; '*' shows while the document has unsaved changes.
// - Autosave (shell/autosaver.h) copies unsaved edits to the recovery store every autosave_interval_ms and
//   before every run; a successful Save, or closing with Discard, removes the copy.
// - Switching notebooks (open, new, close) restarts the kernel when it has run anything, so every notebook starts
//   from a fresh namespace, as with Jupyter's one kernel per notebook.
// - Each registered command (shell/panel.h) becomes an action in its menu (a menu of that title, made before Help
//   when there is none), objectName == the command's id.
// - Each registered panel becomes a QDockWidget with objectName == the panel's id; the window layout
//   (geometry, dock positions and visibility) is saved to QSettings ("window/geometry", "window/state") when the
//   window closes and restored when it is created. Without a saved layout, each dock area holds its panels as
//   the tabs of one dock, in registration order, the first visible one in front (Note [Default dock layout]).
// - Menu entries for keys the notebook handles itself (Shift+Enter, A, B, D,D, I,I, ...) show the key as a hint
//   only, so they never steal keys from a cell editor; application keys (Ctrl+S, Ctrl+O, ...) are real shortcuts.
#pragma once
#include <QMainWindow>
#include <QPointer>

#include <memory>

#include "notebook_view/cell_command.h"
#include "shell/panel.h"
#include "shell/recent_files.h"

class QAction;
class QDockWidget;
class QLabel;
class QMenu;

namespace rt::studio {

class Autosaver;
class KernelClient;
class KernelStatusLabel;
class NotebookDocument;
class NotebookView;
class RecoveryStore;

struct MainWindowOptions {
  int autosave_interval_ms = 30000;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  MainWindow(const PanelRegistry& panels, KernelClient& kernel, MainWindowOptions options = {},
             QWidget* parent = nullptr);
  ~MainWindow() override;

  // [Document] Each returns false when the user cancelled or the operation failed (and was reported).
  void new_notebook();                       // no question when the current one is unmodified
  bool open_file(const QString& path);       // absolute: the interpreter may change the process's directory
  bool open_with_dialog();
  bool save();                               // Save As dialog while untitled
  bool save_as(const QString& path);         // empty: ask with a file dialog
  bool close_notebook();                     // leaves a new, empty notebook
  // Shows a recovered document (dirty, path = its original) in place of the current one, without asking, and
  // autosaves it at once; then the recovery entry it came from may be discarded (unless its key is
  // autosaver().current_key(), which now holds the fresh copy).
  void adopt(std::unique_ptr<NotebookDocument> document);

  NotebookDocument* document() const { return document_.get(); }
  NotebookView* view() const { return view_; }
  KernelClient& kernel() const { return kernel_; }
  Autosaver& autosaver() const { return *autosaver_; }
  KernelStatusLabel* kernel_status() const { return kernel_status_; }
  RecentFiles& recent_files() { return recent_; }
  QDockWidget* panel_dock(const QString& id) const;
  QWidget* panel_widget(const QString& id) const;
  QAction* action(const QString& object_name) const;  // menu actions by objectName, e.g. "actionSave"

  void save_layout() const;
  void restore_layout();

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  // [Panels]
  void create_panels(const PanelRegistry& panels);
  void arrange_default_layout();
  QDockWidget* first_dock_in(Qt::DockWidgetArea area) const;
  // [Menus]
  void create_actions();
  void create_commands(const PanelRegistry& panels);  // the registered commands' menu entries
  QAction* add_action(QMenu* menu, const QString& name, const QString& text, const QKeySequence& shortcut = {});
  QAction* add_cell_command(QMenu* menu, const QString& name, CellCommand command);
  void rebuild_recent_menu();
  // [Document lifecycle]
  bool confirm_discard(const QString& action);
  void show_document(std::unique_ptr<NotebookDocument> document);
  void fresh_kernel_for_new_document();
  void update_title();

  KernelClient& kernel_;
  NotebookView* view_;
  std::unique_ptr<NotebookDocument> document_;
  Autosaver* autosaver_;
  KernelStatusLabel* kernel_status_;
  QLabel* autosave_label_;
  RecentFiles recent_;
  QMenu* recent_menu_ = nullptr;
  QMenu* panels_menu_ = nullptr;
  std::vector<QDockWidget*> docks_;
};

}  // namespace rt::studio
