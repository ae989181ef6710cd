// app/studio/shell/panel.h — how a feature becomes a dockable panel of the studio.
//
//   class TimelinePanel final : public rt::studio::StudioPanel {
//    public:
//     QString id() const override { return QStringLiteral("timeline"); }
//     QString title() const override { return QObject::tr("Timeline"); }
//     Qt::DockWidgetArea default_area() const override { return Qt::BottomDockWidgetArea; }
//     QWidget* create_widget(const PanelContext& context, QWidget* parent) override {
//       return new TimelineWidget(context.kernel, parent);
//     }
//   };
//
//   // app/studio/panels/builtin_panels.cpp — the one list of panels the studio ships:
//   registry.add(std::make_unique<TimelinePanel>());
//
// The shell (MainWindow) never names a panel: it turns every registered panel into a QDockWidget whose
// objectName is the panel's id (so QMainWindow::saveState/restoreState persist the layout under that id),
// docks it in default_area() the first time, lists it in View > Panels, and keeps the widget alive as long as
// the window. New panels (timeline, memory, graph, debugger) are added in panels/ only.
//
// Contracts:
// - id() is stable across releases (it keys the saved layout), non-empty, ASCII letters, digits, '_' or '-';
//   PanelRegistry::add refuses an invalid or duplicate id with std::invalid_argument naming it.
// - create_widget is called once per main window, on the GUI thread, after the kernel client exists; the
//   returned widget is owned by `parent` (the dock). It must not block: no waiting on the kernel.
// - starts_visible() decides visibility only when no saved layout exists yet.
// - needs_opengl(): the widget draws with OpenGL (a QOpenGLWidget, e.g. the Dear ImGui panels). On a Qt platform
//   without OpenGL windows (offscreen, minimal: tests, headless hosts) the shell shows a notice in the dock instead
//   of calling create_widget, since one QOpenGLWidget makes such a window's every repaint crash.
#pragma once
#include <QString>
#include <QWidget>
#include <Qt>

#include <functional>
#include <memory>
#include <vector>

namespace rt::studio {

class KernelClient;

// What a panel may use. Pointers stay valid for the lifetime of the panel's widget.
struct PanelContext {
  KernelClient* kernel = nullptr;  // the notebook's kernel (signals on the GUI thread)
};

class StudioPanel {
 public:
  virtual ~StudioPanel() = default;
  virtual QString id() const = 0;
  virtual QString title() const = 0;
  virtual Qt::DockWidgetArea default_area() const { return Qt::RightDockWidgetArea; }
  virtual bool starts_visible() const { return true; }
  virtual bool needs_opengl() const { return false; }
  virtual QWidget* create_widget(const PanelContext& context, QWidget* parent) = 0;
};

// A menu command a feature adds to the window, as Qt Creator's plugins add actions (Remote > Attach… opens the
// Attach dialog). The shell creates the QAction; the feature decides what it does.
//
//   registry.add_command({"actionAttach", QObject::tr("&Remote"), QObject::tr("&Attach…"),
//                         [](QWidget* window) { show_attach_dialog(window); }});
struct StudioCommand {
  QString id;    // the QAction's objectName (MainWindow::action(id) finds it); same rules as a panel id
  QString menu;  // the top-level menu it goes in; made (before Help) when the window has no menu of that title
  QString text;  // the action's text
  std::function<void(QWidget* window)> run;  // on the GUI thread; `window` is the main window (parent dialogs to it)
};

class PanelRegistry {
 public:
  // Throws std::invalid_argument for an invalid or duplicate id, or a command without `run`.
  void add_command(StudioCommand command);
  const std::vector<StudioCommand>& commands() const { return commands_; }
  // Takes ownership; throws std::invalid_argument for a null panel, an invalid id or one already registered.
  void add(std::unique_ptr<StudioPanel> panel);
  // Panels in registration order (the order of View > Panels and of first-time docking).
  const std::vector<std::unique_ptr<StudioPanel>>& panels() const { return panels_; }
  // nullptr when no panel has that id.
  StudioPanel* find(const QString& id) const;

 private:
  std::vector<std::unique_ptr<StudioPanel>> panels_;
  std::vector<StudioCommand> commands_;
};

}  // namespace rt::studio
