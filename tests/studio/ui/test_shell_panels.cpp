// Panels plug into the shell through shell/panel.h only: the registry's checks, one dock per registered panel
// (objectName = id) listed in View > Panels, and the window layout persisting through QSettings.
#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QtTest>

#include <memory>
#include <stdexcept>

#include "kernel/qt/kernel_client.h"
#include "panels/builtin_panels.h"
#include "shell/main_window.h"
#include "shell/panel.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"

using namespace rt::studio;
using namespace rt::studio::test;

namespace {

// A panel defined entirely outside the shell, as a later issue's timeline panel would be.
class ProbePanel final : public StudioPanel {
 public:
  explicit ProbePanel(QString id, Qt::DockWidgetArea area = Qt::BottomDockWidgetArea, bool visible = true)
      : id_(std::move(id)), area_(area), visible_(visible) {}
  QString id() const override { return id_; }
  QString title() const override { return "Probe " + id_; }
  Qt::DockWidgetArea default_area() const override { return area_; }
  bool starts_visible() const override { return visible_; }
  QWidget* create_widget(const PanelContext& context, QWidget* parent) override {
    ++created;
    seen_kernel = context.kernel;
    auto* label = new QLabel("probe " + id_, parent);
    label->setObjectName("probeLabel_" + id_);
    return label;
  }
  int created = 0;
  KernelClient* seen_kernel = nullptr;

 private:
  QString id_;
  Qt::DockWidgetArea area_;
  bool visible_;
};

}  // namespace

class ShellPanelsTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<IsolatedSettings> settings_;
  std::unique_ptr<KernelClient> kernel_;

 private slots:
  void initTestCase() {
    settings_ = std::make_unique<IsolatedSettings>();
    kernel_ = std::make_unique<KernelClient>();
  }
  void cleanupTestCase() { kernel_.reset(); }

  void registry_refuses_bad_and_duplicate_ids() {
    PanelRegistry registry;
    registry.add(std::make_unique<ProbePanel>("timeline"));
    QVERIFY(registry.find("timeline"));
    QVERIFY(!registry.find("memory"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add(std::make_unique<ProbePanel>("timeline")));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add(std::make_unique<ProbePanel>("")));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add(std::make_unique<ProbePanel>("has space")));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add(nullptr));
    try {
      registry.add(std::make_unique<ProbePanel>("timeline"));
    } catch (const std::invalid_argument& e) {
      QVERIFY(QString(e.what()).contains("'timeline' is already registered"));
    }
    QCOMPARE(registry.panels().size(), std::size_t(1));
  }

  void builtin_panels_include_variables_and_the_visualizers() {
    PanelRegistry registry;
    register_builtin_panels(registry);
    QVERIFY(registry.find("variables"));
    QCOMPARE(registry.find("variables")->title(), QStringLiteral("Variables"));
    for (const char* id : {"timeline", "memory", "scalars", "debugger", "graph", "grad_norms"}) {
      QVERIFY2(registry.find(id), id);
      QVERIFY2(registry.find(id)->needs_opengl(), id);
    }
    QVERIFY(!registry.find("variables")->needs_opengl());
  }

  void commands_become_actions_in_their_menu_before_help() {
    PanelRegistry registry;
    int runs = 0;
    QWidget* ran_with = nullptr;
    registry.add_command({"actionProbe", "&Probe", "Probe…", [&](QWidget* window) {
                            ++runs;
                            ran_with = window;
                          }});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add_command({"actionProbe", "&Probe", "again", [](QWidget*) {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add_command({"bad id", "&Probe", "x", [](QWidget*) {}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, registry.add_command({"actionNothing", "&Probe", "x", {}}));
    register_builtin_panels(registry);  // Remote > Attach…
    MainWindow w(registry, *kernel_);
    QAction* probe = w.action("actionProbe");
    QVERIFY(probe);
    probe->trigger();
    QCOMPARE(runs, 1);
    QCOMPARE(ran_with, &w);
    QVERIFY(w.action("actionAttach"));
    QStringList menus;
    for (QAction* a : w.menuBar()->actions()) menus << a->text();
    QVERIFY2(menus.indexOf("&Probe") >= 0 && menus.indexOf("&Probe") < menus.indexOf("&Help"), qPrintable(menus.join(",")));
    QVERIFY2(menus.indexOf("&Remote") >= 0 && menus.indexOf("&Remote") < menus.indexOf("&Help"), qPrintable(menus.join(",")));
  }

  void opengl_panels_show_a_notice_on_a_platform_without_opengl() {
    QCOMPARE(QGuiApplication::platformName(), QStringLiteral("offscreen"));  // how this test runs
    PanelRegistry registry;
    register_builtin_panels(registry);
    MainWindow w(registry, *kernel_);
    w.show();
    QDockWidget* timeline = w.panel_dock("timeline");
    QVERIFY(timeline);
    auto* notice = qobject_cast<QLabel*>(timeline->widget());
    QVERIFY(notice);
    QCOMPARE(notice->objectName(), QStringLiteral("openglNotice"));
    QVERIFY(notice->text().contains("offscreen"));
    QVERIFY(notice->text().contains("xvfb-run"));
  }

  void each_panel_becomes_a_dock_listed_in_view_panels() {
    PanelRegistry registry;
    register_builtin_panels(registry);
    auto probe = std::make_unique<ProbePanel>("probe-bottom");
    ProbePanel* raw = probe.get();
    registry.add(std::move(probe));
    registry.add(std::make_unique<ProbePanel>("probe_hidden", Qt::LeftDockWidgetArea, false));
    MainWindow w(registry, *kernel_);
    w.show();
    QCOMPARE(raw->created, 1);
    QCOMPARE(raw->seen_kernel, kernel_.get());
    for (const QString id : {"variables", "probe-bottom", "probe_hidden"}) {
      QDockWidget* dock = w.panel_dock(id);
      QVERIFY2(dock, qPrintable(id));
      QCOMPARE(dock->objectName(), id);
      QVERIFY(dock->widget());
    }
    QCOMPARE(w.dockWidgetArea(w.panel_dock("variables")), Qt::RightDockWidgetArea);
    QCOMPARE(w.dockWidgetArea(w.panel_dock("probe-bottom")), Qt::BottomDockWidgetArea);
    QVERIFY(w.panel_dock("probe-bottom")->toggleViewAction()->isChecked());  // open, as a tab behind the timeline
    QVERIFY(!w.panel_dock("probe_hidden")->isVisible());
    QVERIFY(w.findChild<QLabel*>("probeLabel_probe-bottom"));

    auto* menu = w.findChild<QMenu*>("menuPanels");
    QVERIFY(menu);
    QStringList titles, expected;
    for (QAction* a : menu->actions()) titles << a->text();
    PanelRegistry builtin;
    register_builtin_panels(builtin);
    for (const auto& panel : builtin.panels()) expected << panel->title();
    expected << "Probe probe-bottom" << "Probe probe_hidden";
    QCOMPARE(titles, expected);
    QAction* toggle = w.panel_dock("probe_hidden")->toggleViewAction();
    toggle->trigger();
    QVERIFY(w.panel_dock("probe_hidden")->isVisible());
    toggle->trigger();
    QVERIFY(!w.panel_dock("probe_hidden")->isVisible());
  }

  void default_layout_gives_each_area_one_tabbed_dock() {
    QSettings().remove("window/state");  // the first start: no saved layout
    QSettings().remove("window/geometry");
    PanelRegistry registry;
    register_builtin_panels(registry);
    registry.add(std::make_unique<ProbePanel>("probe-bottom"));
    MainWindow w(registry, *kernel_);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto dock = [&](const char* id) { return w.panel_dock(id); };
    // Qt keeps the docks of the tabs behind open (isVisible) but moves them out of sight.
    auto in_front = [](QDockWidget* d) { return d->isVisible() && !d->visibleRegion().isEmpty(); };
    // Right: the variables in front; the graph (hidden) is a tab of the same dock.
    const QList<QDockWidget*> right = w.tabifiedDockWidgets(dock("variables"));
    QVERIFY(right.contains(dock("graph")));
    QVERIFY(in_front(dock("variables")));
    QVERIFY(!dock("graph")->toggleViewAction()->isChecked());
    // Bottom: the timeline in front of memory, scalars, the debugger (wide: it sits where the window is
    // widest), gradient norms and a panel registered later.
    QCOMPARE(w.dockWidgetArea(dock("debugger")), Qt::BottomDockWidgetArea);
    const QList<QDockWidget*> bottom = w.tabifiedDockWidgets(dock("timeline"));
    for (const char* id : {"memory", "scalars", "debugger", "grad_norms", "probe-bottom"})
      QVERIFY2(bottom.contains(dock(id)), id);
    QVERIFY(in_front(dock("timeline")));
    QVERIFY(!in_front(dock("memory")));
    QVERIFY(!in_front(dock("debugger")));
    QVERIFY(dock("memory")->toggleViewAction()->isChecked());
    QVERIFY(dock("debugger")->toggleViewAction()->isChecked());
    // A tab brought to the front gets the whole area: the timeline spans the window, and so does the debugger.
    const int right_width = dock("variables")->width();
    QVERIFY2(right_width >= 400, qPrintable(QString::number(right_width)));
    QVERIFY2(dock("timeline")->width() >= w.width() - 20, qPrintable(QString::number(dock("timeline")->width())));
    dock("debugger")->raise();
    QVERIFY(wait_until([&] { return in_front(dock("debugger")); }, 2000));
    QVERIFY2(dock("debugger")->width() >= w.width() - 20, qPrintable(QString::number(dock("debugger")->width())));
    QVERIFY(!in_front(dock("timeline")));
    // A hidden panel shown later opens as a tab of its area, not as a split.
    dock("graph")->show();
    QVERIFY(w.tabifiedDockWidgets(dock("variables")).contains(dock("graph")));
    w.close();
    QSettings().remove("window/state");  // what closing saved: the next test starts from the default layout
    QSettings().remove("window/geometry");
  }

  void layout_persists_across_windows() {
    PanelRegistry registry;
    register_builtin_panels(registry);
    registry.add(std::make_unique<ProbePanel>("probe-bottom"));
    {
      MainWindow w(registry, *kernel_);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      w.resize(1100, 700);
      w.addDockWidget(Qt::LeftDockWidgetArea, w.panel_dock("variables"));
      w.panel_dock("probe-bottom")->hide();
      QTest::qWait(50);
      QVERIFY(w.close());  // closing saves the layout
    }
    QVERIFY(QSettings().contains("window/state"));
    {
      MainWindow w(registry, *kernel_);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QCOMPARE(w.dockWidgetArea(w.panel_dock("variables")), Qt::LeftDockWidgetArea);
      QVERIFY(!w.panel_dock("probe-bottom")->isVisible());
      QVERIFY(w.panel_dock("variables")->isVisible());
      QCOMPARE(w.size(), QSize(1100, 700));
      w.close();
    }
    // A layout saved without a panel leaves a newly registered one at its default place.
    registry.add(std::make_unique<ProbePanel>("probe-new", Qt::RightDockWidgetArea));
    MainWindow w(registry, *kernel_);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.dockWidgetArea(w.panel_dock("probe-new")), Qt::RightDockWidgetArea);
    QVERIFY(w.panel_dock("probe-new")->isVisible());
    QCOMPARE(w.dockWidgetArea(w.panel_dock("variables")), Qt::LeftDockWidgetArea);
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  configure_application(app);
  ShellPanelsTest test;
  return run_qtest(test, argc, argv);
}

#include "test_shell_panels.moc"
