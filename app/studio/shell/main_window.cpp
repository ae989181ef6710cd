#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTime>
#include <QToolBar>

#include <algorithm>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook_view/notebook_view.h"
#include "shell/autosaver.h"
#include "shell/kernel_status_label.h"
#include "shell/notebook_file.h"
#include "shell/prompts.h"

namespace rt::studio {
namespace {

const char* const kGeometryKey = "window/geometry";
const char* const kStateKey = "window/state";
// Bump when dock ids change meaning or the default layout changes enough that saved layouts should give way to it
// (2: one tab group per dock area).
constexpr int kLayoutVersion = 2;
constexpr int kMessageMs = 8000;

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

// [SECTION] construction

MainWindow::MainWindow(const PanelRegistry& panels, KernelClient& kernel, MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), kernel_(kernel), view_(new NotebookView(this)),
      autosaver_(new Autosaver(RecoveryStore{}, options.autosave_interval_ms, this)),
      kernel_status_(new KernelStatusLabel(this)), autosave_label_(new QLabel(this)) {
  setObjectName(QStringLiteral("studioMainWindow"));
  setCentralWidget(view_);
  view_->set_kernel(&kernel_);
  view_->set_restart_confirmation([](QWidget* parent) { return confirm_restart(parent); });
  setDockNestingEnabled(true);

  kernel_status_->bind(&kernel_);
  autosave_label_->setObjectName(QStringLiteral("autosaveStatus"));
  statusBar()->addPermanentWidget(autosave_label_);
  statusBar()->addPermanentWidget(kernel_status_);

  connect(view_, &NotebookView::modifiedChanged, this, &MainWindow::update_title);
  connect(view_, &NotebookView::documentEdited, this, &MainWindow::update_title);
  connect(view_, &NotebookView::aboutToRun, autosaver_, &Autosaver::save_now);
  connect(view_, &NotebookView::message, this, [this](const QString& text) { statusBar()->showMessage(text, kMessageMs); });
  connect(autosaver_, &Autosaver::saved, this, [this](const QString& file) {
    autosave_label_->setText(tr("Autosaved %1").arg(QTime::currentTime().toString(QStringLiteral("HH:mm"))));
    autosave_label_->setToolTip(tr("Unsaved edits are kept in %1 until you save").arg(file));
  });
  connect(autosaver_, &Autosaver::failed, this, [this](const QString& message) {
    autosave_label_->setText(tr("Autosave failed"));
    autosave_label_->setToolTip(message);
    statusBar()->showMessage(message, kMessageMs);
  });

  create_actions();
  create_commands(panels);
  create_panels(panels);
  resize(1280, 820);
  restore_layout();
  show_document(std::make_unique<NotebookDocument>());
}

MainWindow::~MainWindow() {
  autosaver_->watch(nullptr);
  view_->set_document(nullptr);
}

// [SECTION] panels and layout

namespace {

bool platform_has_opengl_windows() {
  const QString platform = QGuiApplication::platformName();
  return platform != QLatin1String("offscreen") && platform != QLatin1String("minimal");
}

QWidget* opengl_notice(const StudioPanel& panel, QWidget* parent) {
  auto* label = new QLabel(
      QObject::tr("The %1 panel draws with OpenGL, which the Qt platform '%2' does not provide.\nRun the studio on "
                  "a display (or under xvfb-run -a) to use it.")
          .arg(panel.title(), QGuiApplication::platformName()),
      parent);
  label->setObjectName(QStringLiteral("openglNotice"));
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  return label;
}

}  // namespace

void MainWindow::create_panels(const PanelRegistry& panels) {
  const PanelContext context{&kernel_};
  for (const auto& panel : panels.panels()) {
    auto* dock = new QDockWidget(panel->title(), this);
    dock->setObjectName(panel->id());
    dock->setWidget(panel->needs_opengl() && !platform_has_opengl_windows() ? opengl_notice(*panel, dock)
                                                                           : panel->create_widget(context, dock));
    addDockWidget(panel->default_area(), dock);
    dock->setVisible(panel->starts_visible());
    panels_menu_->addAction(dock->toggleViewAction());
    docks_.push_back(dock);
  }
  if (docks_.empty()) panels_menu_->addAction(tr("(no panels registered)"))->setEnabled(false);
  arrange_default_layout();
}

// Note [Default dock layout]
// Panels side by side in one area each get a slice too narrow or too short to use at the default window size:
// the debugger (breakpoints, a gradient table and the execution order, about 1,400 px wide) was squeezed under
// the variables, the timeline and memory charts shared 640 px. So each area is one tabbed dock the first time,
// and every panel in it gets the whole area: the notebook in the middle, the variables (and the graph) on the
// right, the timeline, memory, scalars, gradient norms and debugger as tabs across the bottom. Dragging a tab out
// splits the area as before, and the saved layout keeps whatever the user arranged.
void MainWindow::arrange_default_layout() {
  for (Qt::DockWidgetArea area : {Qt::LeftDockWidgetArea, Qt::RightDockWidgetArea, Qt::TopDockWidgetArea,
                                  Qt::BottomDockWidgetArea}) {
    std::vector<QDockWidget*> group;
    for (QDockWidget* dock : docks_)
      if (dockWidgetArea(dock) == area) group.push_back(dock);
    if (group.empty()) continue;
    for (std::size_t i = 1; i < group.size(); ++i) tabifyDockWidget(group.front(), group[i]);
    const auto shown = std::find_if(group.begin(), group.end(), [](QDockWidget* d) { return !d->isHidden(); });
    if (shown != group.end()) (*shown)->raise();
  }
  // The notebook keeps most of the width; the bottom panels get about a third of the default height.
  if (QDockWidget* right = first_dock_in(Qt::RightDockWidgetArea)) resizeDocks({right}, {560}, Qt::Horizontal);
  if (QDockWidget* bottom = first_dock_in(Qt::BottomDockWidgetArea)) resizeDocks({bottom}, {300}, Qt::Vertical);
}

QDockWidget* MainWindow::first_dock_in(Qt::DockWidgetArea area) const {
  for (QDockWidget* dock : docks_)
    if (dockWidgetArea(dock) == area) return dock;
  return nullptr;
}

QDockWidget* MainWindow::panel_dock(const QString& id) const {
  for (QDockWidget* dock : docks_)
    if (dock->objectName() == id) return dock;
  return nullptr;
}

QWidget* MainWindow::panel_widget(const QString& id) const {
  QDockWidget* dock = panel_dock(id);
  return dock ? dock->widget() : nullptr;
}

void MainWindow::save_layout() const {
  QSettings settings;
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState(kLayoutVersion));
}

void MainWindow::restore_layout() {
  QSettings settings;
  const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
  if (!geometry.isEmpty()) restoreGeometry(geometry);
  const QByteArray state = settings.value(kStateKey).toByteArray();
  if (!state.isEmpty()) restoreState(state, kLayoutVersion);
}

// [SECTION] menus and toolbar

QAction* MainWindow::action(const QString& object_name) const { return findChild<QAction*>(object_name); }

QAction* MainWindow::add_action(QMenu* menu, const QString& name, const QString& text, const QKeySequence& shortcut) {
  auto* a = new QAction(text, this);
  a->setObjectName(name);
  if (!shortcut.isEmpty()) a->setShortcut(shortcut);
  menu->addAction(a);
  return a;
}

// The key is a hint after '\t' (QMenu shows it in the shortcut column) and not a QAction shortcut: the notebook
// handles these keys itself, in the right mode, so a cell editor still receives them.
QAction* MainWindow::add_cell_command(QMenu* menu, const QString& name, CellCommand command) {
  QString text = cell_command_title(command);
  if (const QString keys = view_->keymap().shortcut_text(command); !keys.isEmpty()) text += '\t' + keys;
  QAction* a = add_action(menu, name, text);
  connect(a, &QAction::triggered, view_, [this, command] { view_->execute(command); });
  return a;
}

void MainWindow::create_actions() {
  QStyle* s = style();
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* new_action = add_action(file, "actionNew", tr("&New Notebook"), QKeySequence::New);
  new_action->setIcon(s->standardIcon(QStyle::SP_FileIcon));
  connect(new_action, &QAction::triggered, this, &MainWindow::new_notebook);
  QAction* open = add_action(file, "actionOpen", tr("&Open…"), QKeySequence::Open);
  open->setIcon(s->standardIcon(QStyle::SP_DialogOpenButton));
  connect(open, &QAction::triggered, this, &MainWindow::open_with_dialog);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  recent_menu_->setObjectName(QStringLiteral("menuOpenRecent"));
  connect(recent_menu_, &QMenu::aboutToShow, this, &MainWindow::rebuild_recent_menu);
  file->addSeparator();
  QAction* save_action = add_action(file, "actionSave", tr("&Save"), QKeySequence::Save);
  save_action->setIcon(s->standardIcon(QStyle::SP_DialogSaveButton));
  connect(save_action, &QAction::triggered, this, &MainWindow::save);
  connect(add_action(file, "actionSaveAs", tr("Save &As…"), QKeySequence::SaveAs), &QAction::triggered, this,
          [this] { save_as({}); });
  connect(add_action(file, "actionClose", tr("&Close Notebook"), QKeySequence::Close), &QAction::triggered, this,
          &MainWindow::close_notebook);
  file->addSeparator();
  connect(add_action(file, "actionQuit", tr("&Quit"), QKeySequence::Quit), &QAction::triggered, this,
          &QWidget::close);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  add_cell_command(edit, "actionUndoCells", CellCommand::Undo);
  add_cell_command(edit, "actionRedoCells", CellCommand::Redo);
  edit->addSeparator();
  add_cell_command(edit, "actionCutCells", CellCommand::Cut);
  add_cell_command(edit, "actionCopyCells", CellCommand::Copy);
  add_cell_command(edit, "actionPasteBelow", CellCommand::PasteBelow);
  add_cell_command(edit, "actionPasteAbove", CellCommand::PasteAbove);
  add_cell_command(edit, "actionDeleteCells", CellCommand::DeleteSelected);
  edit->addSeparator();
  add_cell_command(edit, "actionInsertAbove", CellCommand::InsertAbove);
  QAction* insert_below = add_cell_command(edit, "actionInsertBelow", CellCommand::InsertBelow);
  insert_below->setIcon(s->standardIcon(QStyle::SP_FileDialogNewFolder));
  insert_below->setIconText(tr("Add Cell"));
  add_cell_command(edit, "actionSplitCell", CellCommand::SplitAtCursor);
  add_cell_command(edit, "actionMergeCells", CellCommand::MergeSelected);
  add_cell_command(edit, "actionMoveUp", CellCommand::MoveUp);
  add_cell_command(edit, "actionMoveDown", CellCommand::MoveDown);
  edit->addSeparator();
  add_cell_command(edit, "actionToCode", CellCommand::ToCode);
  add_cell_command(edit, "actionToMarkdown", CellCommand::ToMarkdown);
  add_cell_command(edit, "actionToRaw", CellCommand::ToRaw);

  QMenu* view_menu = menuBar()->addMenu(tr("&View"));
  panels_menu_ = view_menu->addMenu(tr("&Panels"));
  panels_menu_->setObjectName(QStringLiteral("menuPanels"));
  add_cell_command(view_menu, "actionToggleOutputs", CellCommand::ToggleOutputs);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  QAction* run_cell = add_cell_command(run, "actionRunCell", CellCommand::RunAndSelectNext);
  run_cell->setIcon(s->standardIcon(QStyle::SP_MediaPlay));
  run_cell->setIconText(tr("Run"));
  add_cell_command(run, "actionRunInPlace", CellCommand::RunInPlace);
  add_cell_command(run, "actionRunInsertBelow", CellCommand::RunAndInsertBelow);
  run->addSeparator();
  QAction* run_all = add_action(run, "actionRunAll", tr("Run &All Cells"));
  run_all->setIcon(s->standardIcon(QStyle::SP_MediaSeekForward));
  run_all->setIconText(tr("Run All"));
  connect(run_all, &QAction::triggered, view_, &NotebookView::runAll);
  connect(add_action(run, "actionRunAbove", tr("Run All A&bove")), &QAction::triggered, view_,
          &NotebookView::runAbove);
  connect(add_action(run, "actionRunBelow", tr("Run Selected and &Below")), &QAction::triggered, view_,
          &NotebookView::runBelow);
  run->addSeparator();
  connect(add_action(run, "actionClearOutputs", tr("&Clear Outputs of Selected Cells")), &QAction::triggered, view_,
          &NotebookView::clearOutputs);
  connect(add_action(run, "actionClearAllOutputs", tr("Clear &All Outputs")), &QAction::triggered, view_,
          &NotebookView::clearAllOutputs);

  QMenu* kernel_menu = menuBar()->addMenu(tr("&Kernel"));
  QAction* interrupt = add_cell_command(kernel_menu, "actionInterrupt", CellCommand::Interrupt);
  interrupt->setIcon(s->standardIcon(QStyle::SP_MediaStop));
  interrupt->setIconText(tr("Interrupt"));
  QAction* restart = add_cell_command(kernel_menu, "actionRestart", CellCommand::Restart);
  restart->setIcon(s->standardIcon(QStyle::SP_BrowserReload));
  restart->setIconText(tr("Restart"));
  connect(add_action(kernel_menu, "actionRestartRunAll", tr("Restart and Run All Cells…")), &QAction::triggered,
          this, [this] {
            if (!confirm_restart(this)) return;
            view_->restartNow();
            view_->runAll();
          });
  connect(add_action(kernel_menu, "actionRestartClear", tr("Restart and Clear All Outputs…")), &QAction::triggered,
          this, [this] {
            if (!confirm_restart(this)) return;
            view_->restartNow();
            view_->clearAllOutputs();
          });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  connect(add_action(help, "actionShortcuts", tr("&Keyboard Shortcuts")), &QAction::triggered, this, [this] {
    QString text = QStringLiteral("<table>");
    for (const KeyBinding& b : view_->keymap().bindings()) {
      const QString mode = b.mode == EditorMode::Command ? tr("command") : tr("edit");
      QString keys = QKeySequence(b.first).toString(QKeySequence::NativeText);
      if (b.second) keys += QStringLiteral(", ") + QKeySequence(*b.second).toString(QKeySequence::NativeText);
      text += QStringLiteral("<tr><td><b>%1</b></td><td>&nbsp;%2&nbsp;</td><td><i>%3</i></td></tr>")
                  .arg(keys.toHtmlEscaped(), cell_command_title(b.command).toHtmlEscaped(), mode);
    }
    QMessageBox::information(this, tr("Keyboard shortcuts"), text + QStringLiteral("</table>"));
  });
  connect(add_action(help, "actionAbout", tr("&About RustyTorch++ Studio")), &QAction::triggered, this, [this] {
    QMessageBox::about(this, tr("About RustyTorch++ Studio"),
                       tr("<b>RustyTorch++ Studio</b> %1<br>Notebooks (.ipynb, nbformat 4.5) on an embedded Python "
                          "kernel running the RustyTorch++ engine.<br>Qt %2")
                           .arg(QApplication::applicationVersion(), QString::fromLatin1(qVersion())));
  });

  QToolBar* tools = addToolBar(tr("Notebook"));
  tools->setObjectName(QStringLiteral("notebookToolbar"));
  tools->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  tools->setMovable(false);
  tools->addAction(new_action);
  tools->addAction(open);
  tools->addAction(save_action);
  tools->addSeparator();
  tools->addAction(action(QStringLiteral("actionInsertBelow")));
  tools->addSeparator();
  tools->addAction(run_cell);
  tools->addAction(run_all);
  tools->addAction(interrupt);
  tools->addAction(restart);
  view_menu->addSeparator();
  view_menu->addAction(tools->toggleViewAction());
}

void MainWindow::create_commands(const PanelRegistry& panels) {
  // Commands' menus go before Help, the last menu.
  QAction* help = menuBar()->actions().isEmpty() ? nullptr : menuBar()->actions().last();
  for (const StudioCommand& command : panels.commands()) {
    QMenu* menu = nullptr;
    for (QAction* a : menuBar()->actions())
      if (a->menu() && a->text() == command.menu) menu = a->menu();
    if (!menu) {
      menu = new QMenu(command.menu, menuBar());
      menuBar()->insertMenu(help, menu);
    }
    QAction* a = add_action(menu, command.id, command.text);
    connect(a, &QAction::triggered, this, [this, run = command.run] { run(this); });
  }
}

void MainWindow::rebuild_recent_menu() {
  const QStringList gone = recent_.prune_missing();
  if (!gone.isEmpty())
    statusBar()->showMessage(tr("Removed from Open Recent because they no longer exist: %1").arg(gone.join(", ")),
                             kMessageMs);
  recent_menu_->clear();
  int number = 1;
  for (const QString& path : recent_.paths()) {
    const QFileInfo info(path);
    QAction* a = recent_menu_->addAction(
        QStringLiteral("&%1 %2 — %3").arg(number % 10).arg(info.fileName(), QDir::toNativeSeparators(info.path())));
    a->setObjectName(QStringLiteral("actionRecent%1").arg(number));
    a->setData(path);
    connect(a, &QAction::triggered, this, [this, path] { open_file(path); });
    ++number;
  }
  if (recent_.paths().isEmpty()) recent_menu_->addAction(tr("(no recent notebooks)"))->setEnabled(false);
  recent_menu_->addSeparator();
  QAction* clear = recent_menu_->addAction(tr("Clear Recent"));
  clear->setObjectName(QStringLiteral("actionClearRecent"));
  clear->setEnabled(!recent_.paths().isEmpty());
  connect(clear, &QAction::triggered, this, [this] { recent_.clear(); });
}

// [SECTION] document lifecycle

bool MainWindow::confirm_discard(const QString& action) {
  if (!document_ || !document_->is_dirty()) return true;
  switch (ask_unsaved_changes(this, qs(document_->display_name()), action)) {
    case UnsavedChoice::save: return save();
    case UnsavedChoice::discard: autosaver_->forget(); return true;
    case UnsavedChoice::cancel: return false;
  }
  return false;
}

void MainWindow::fresh_kernel_for_new_document() {
  if (view_->is_busy() || kernel_.kernel().next_execution_count() > 1) view_->restartNow();
}

void MainWindow::show_document(std::unique_ptr<NotebookDocument> document) {
  autosaver_->watch(nullptr);
  view_->set_document(nullptr);
  document_ = std::move(document);
  view_->set_document(document_.get());
  autosaver_->watch(document_.get());
  autosave_label_->clear();
  if (!document_->is_untitled())
    kernel_.setWorkingDirectory(QString::fromStdString(document_->path().parent_path().string()));
  view_->selectCell(0);
  update_title();
}

void MainWindow::new_notebook() {
  if (!confirm_discard(tr("creating a new notebook"))) return;
  fresh_kernel_for_new_document();
  show_document(std::make_unique<NotebookDocument>());
}

bool MainWindow::open_with_dialog() {
  const QString start = document_ && !document_->is_untitled()
                            ? QString::fromStdString(document_->path().parent_path().string())
                            : QDir::currentPath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Notebook"), start,
                                                    tr("Notebooks (*.ipynb);;All files (*)"));
  return !path.isEmpty() && open_file(path);
}

bool MainWindow::open_file(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  // Read first: a file that cannot be opened is reported without touching (or asking about) the open notebook.
  std::optional<NotebookDocument> opened = open_notebook_file(this, absolute);
  if (!opened) {
    if (!QFileInfo::exists(absolute)) recent_.remove(absolute);
    return false;
  }
  if (!confirm_discard(tr("opening %1").arg(QFileInfo(absolute).fileName()))) return false;
  fresh_kernel_for_new_document();
  const std::size_t cells = opened->cell_count();
  show_document(std::make_unique<NotebookDocument>(std::move(*opened)));
  recent_.add(absolute);
  statusBar()->showMessage(cells == 1 ? tr("Opened %1 (1 cell)").arg(absolute)
                                      : tr("Opened %1 (%2 cells)").arg(absolute, QString::number(cells)),
                           kMessageMs);
  return true;
}

void MainWindow::adopt(std::unique_ptr<NotebookDocument> document) {
  fresh_kernel_for_new_document();
  show_document(std::move(document));
  autosaver_->save_now();  // the recovered edits are protected again right away
  if (!document_->is_untitled()) recent_.add(qs(document_->path().string()));
  statusBar()->showMessage(tr("Recovered unsaved changes to %1; save to keep them").arg(qs(document_->display_name())),
                           kMessageMs);
}

// [SECTION] saving and closing

bool MainWindow::save() {
  if (!document_) return false;
  if (document_->is_untitled()) return save_as({});
  return save_as(qs(document_->path().string()));
}

bool MainWindow::save_as(const QString& requested) {
  if (!document_) return false;
  QString path = requested;
  if (path.isEmpty()) {
    const QString suggested = document_->is_untitled()
                                  ? QDir::current().filePath(QStringLiteral("Untitled.ipynb"))
                                  : qs(document_->path().string());
    path = QFileDialog::getSaveFileName(this, tr("Save Notebook As"), suggested, tr("Notebooks (*.ipynb)"));
    if (path.isEmpty()) return false;
    if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".ipynb");
  }
  path = QFileInfo(path).absoluteFilePath();
  const bool was_untitled = document_->is_untitled();
  const std::string old_path = document_->path().string();
  if (!save_notebook_file(this, *document_, path)) {
    update_title();
    return false;
  }
  autosaver_->forget();
  autosave_label_->clear();
  recent_.add(path);
  if (was_untitled || old_path != document_->path().string())
    kernel_.setWorkingDirectory(QString::fromStdString(document_->path().parent_path().string()));
  update_title();
  statusBar()->showMessage(tr("Saved %1").arg(path), kMessageMs);
  return true;
}

bool MainWindow::close_notebook() {
  if (!confirm_discard(tr("closing it"))) return false;
  fresh_kernel_for_new_document();
  show_document(std::make_unique<NotebookDocument>());
  return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirm_discard(tr("quitting"))) {
    event->ignore();
    return;
  }
  save_layout();
  autosaver_->watch(nullptr);
  event->accept();
}

// [SECTION] status

void MainWindow::update_title() {
  if (!document_) return;
  const QString title = QStringLiteral("%1[*] — RustyTorch++ Studio").arg(qs(document_->display_name()));
  if (windowTitle() != title) setWindowTitle(title);
  setWindowModified(document_->is_dirty());
}

}  // namespace rt::studio
