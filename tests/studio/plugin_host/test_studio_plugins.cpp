// The studio's plugins on a real X server (run under `xvfb-run -a`): the crash prompt at start, panel plugins
// docked beside the built-in panels (the shipped grad-histogram and fixture panels), a panel built against another
// SDK refused, a panel that throws while drawing stopped with its message while the studio goes on, the Plugins
// dialog, and the screenshots of the studio with the histogram panel (studio-grad-histogram.png) and the dialog
// (plugins-dialog.png) in <build>/test-artifacts/.
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QDir>
#include <QLabel>
#include <QMainWindow>
#include <QTableWidget>
#include <QtTest>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "imgui_test_contents.h"
#include "panels/builtin_panels.h"
#include "plugin_host/panel_compat.h"
#include "plugin_host/plugin_panel_widget.h"
#include "plugin_host/plugins_dialog.h"
#include "plugin_host/studio_plugins.h"
#include "rt/plugin_host/crash_marker.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/session.h"
#include "rt/prof/session_registry.h"
#include "rt/rt.h"
#include "shell/main_window.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"
#include "viz_panels/session_picker.h"

using namespace rt::studio;
using namespace rt::studio::test;
namespace fs = std::filesystem;

namespace {

// How many different colours (4 bits a channel) `image` has inside `area`.
int distinct_colours(const QImage& image, const QRect& area) {
  QSet<int> colours;
  const QRect r = area.intersected(image.rect());
  for (int y = r.top(); y <= r.bottom(); y += 2)
    for (int x = r.left(); x <= r.right(); x += 2) {
      const QColor c = image.pixelColor(x, y);
      colours.insert((c.red() >> 4) << 8 | (c.green() >> 4) << 4 | (c.blue() >> 4));
    }
  return colours.size();
}

const rt::plugin::PluginRecord& record(const std::string& id) {
  const rt::plugin::PluginRecord* r = rt::plugin::process_plugins().find(id);
  if (!r) qFatal("no plugin %s", id.c_str());
  return *r;
}

// A small MLP trained a few steps under a session that records its gradients' histograms each step.
void record_training_with_gradients(int steps) {
  rt::manual_seed(3);
  rt::prof::SessionOptions options;
  options.name = "mlp with gradients";
  rt::prof::Session session(options);
  session.start();
  auto net = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(32, 64),
                                                  std::make_shared<rt::nn::ReLU>(),
                                                  std::make_shared<rt::nn::Linear>(64, 10));
  rt::optim::SGD opt(net->parameters(), rt::optim::SGDOptions{.lr = 0.05});
  const rt::Tensor x = rt::randn({128, 32});
  const rt::Tensor y = rt::randint(0, 10, {128});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    rt::cross_entropy((*net)(x), y).backward();
    for (const auto& [name, p] : net->named_parameters()) rt::prof::record_gradient_histogram(name, p.grad());
    opt.step();
    session.step();
  }
  session.stop();
}

}  // namespace

class StudioPluginsTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path plugins_;
  QStringList asked_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toUtf8());
    qputenv("RT_PLUGIN_STATE_DIR", dir_.filePath("state").toUtf8());
    plugins_ = fs::path(dir_.filePath("plugins").toStdString());
    fs::create_directories(plugins_);
    const fs::path fixtures = fs::path(RT_BUILD_DIR) / "tests" / "plugins" / "fixtures";
    for (const char* f : {"panel-ok", "panel-throws", "panel-old-sdk", "init-fails", "base"})
      fs::copy(fixtures / f, plugins_ / f, fs::copy_options::recursive);
    fs::copy(fs::path(RT_BUILD_DIR) / "plugins" / "grad-histogram", plugins_ / "grad-histogram",
             fs::copy_options::recursive);

    // A studio that died in panel-ok's first draw: its marker stays behind (the child exits without unwinding).
    pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      new rt::plugin::CrashMarker("studio", "org.test.panel-ok", "first draw");
      _exit(0);
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
  }

  void a_plugin_that_crashed_the_last_run_is_offered_for_disabling() {
    PanelRegistry registry;
    register_builtin_panels(registry);
    StudioPluginOptions o;
    o.search_paths = {plugins_};
    o.ask_to_disable = [this](const rt::plugin::CrashRecord& c) {
      asked_ << QString::fromStdString(c.plugin_id + " " + c.phase);
      return true;
    };
    register_plugins(registry, o);
    QCOMPARE(asked_, QStringList{"org.test.panel-ok first draw"});
    QVERIFY(rt::plugin::crashes_left_behind("studio").empty());
    QVERIFY(rt::plugin::PluginSettings::load().disabled.count("org.test.panel-ok"));
    QCOMPARE(record("org.test.panel-ok").state, rt::plugin::PluginState::Disabled);

    // Panels dock after the built-in ones; the refused and the disabled do not.
    QVERIFY(registry.find("plugin-grad_histogram"));
    QVERIFY(registry.find("plugin-fixture_throws"));
    QVERIFY(!registry.find("plugin-fixture_ok"));
    QVERIFY(!registry.find("plugin-fixture_old_sdk"));
    QVERIFY(registry.find("timeline"));
    const auto& old = record("org.test.panel-old-sdk");
    QCOMPARE(old.state, rt::plugin::PluginState::Failed);
    QVERIFY2(QString::fromStdString(old.error).contains("built against panel SDK 0.9"), old.error.c_str());
    QVERIFY(QString::fromStdString(record("org.test.init-fails").error).contains("refuses to initialize"));
    QCOMPARE(record("org.test.base").state, rt::plugin::PluginState::Running);
    run_delayed_plugin_initialization();
  }

  void a_panel_that_throws_is_stopped_with_its_message() {
    const auto& r = record("org.test.panel-throws");
    QMainWindow window;
    window.resize(600, 300);
    auto* w = new PluginPanelWidget(r, &window);
    window.setCentralWidget(w);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int i = 0; i < 6; ++i) {
      w->host()->requestFrame();
      QTest::qWait(50);
    }
    QVERIFY(wait_until([&] { return !w->content()->error().empty(); }, 10000));
    QVERIFY(QString::fromStdString(w->content()->error()).contains("lost its histogram cache"));
    QCOMPARE(r.state, rt::plugin::PluginState::Failed);
    QVERIFY(QString::fromStdString(r.error).contains("panel: draw() threw"));
    // The host goes on drawing (the message instead of the panel).
    const uint64_t before = w->host()->framesDrawn();
    w->host()->requestFrame();
    QVERIFY(wait_until([&] { return w->host()->framesDrawn() > before; }, 5000));
  }

  void the_studio_with_the_histogram_panel_and_the_plugins_dialog() {
    IsolatedSettings settings;
    record_training_with_gradients(16);
    StudioPluginOptions o;
    o.search_paths = {plugins_};
    StudioOptions options;
    StudioSession session(options, [&](PanelRegistry& registry) {
      register_builtin_panels(registry);
      register_plugins(registry, o);  // the plugins are loaded already: this docks their panels in this window
    });
    session.start();
    MainWindow& w = session.window();
    w.resize(1500, 900);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* panel = qobject_cast<PluginPanelWidget*>(w.panel_widget("plugin-grad_histogram"));
    QVERIFY(panel);
    auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget());
    QVERIFY(dock);
    dock->show();
    dock->raise();
    w.resizeDocks({dock}, {820}, Qt::Horizontal);

    // The training recorded above is a finished session of this process: the picker lists it.
    SessionPicker* picker = panel->picker();
    int entry = -1;
    QVERIFY(wait_until([&] {
      picker->refreshLiveSessions();
      for (int i = 0; i < picker->count(); ++i)
        if (picker->entryText(i).contains("mlp with gradients")) entry = i;
      return entry >= 0;
    }, 10000));
    QVERIFY(picker->choose(entry));
    QVERIFY(wait_until([&] { return panel->host()->framesDrawn() >= 3; }, 10000));
    QTest::qWait(500);
    settle_count([&] { return panel->host()->framesDrawn(); });
    QVERIFY2(panel->host()->glProblem().isEmpty(), qPrintable(panel->host()->glProblem()));
    QVERIFY2(panel->content()->error().empty(), panel->content()->error().c_str());

    const QString artifacts = artifacts_dir();
    const QPixmap shot = w.grab();
    QVERIFY(shot.save(artifacts + "/studio-grad-histogram.png", "PNG"));
    qInfo("screenshot: %s/studio-grad-histogram.png", qPrintable(artifacts));
    const QRect area = panel->host()->geometry().translated(panel->host()->mapTo(&w, QPoint(0, 0)) -
                                                            panel->host()->geometry().topLeft());
    QVERIFY2(distinct_colours(shot.toImage(), area) > 20, "the histogram panel looks blank");

    // Help > About Plugins…: every plugin, the failed ones red with their error.
    show_plugins_dialog(&w);
    auto* dialog = w.findChild<PluginsDialog*>("pluginsDialog");
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QTableWidget* table = dialog->table();
    QCOMPARE(table->rowCount(), int(rt::plugin::process_plugins().plugins().size()));
    QStringList ids;
    for (int r = 0; r < table->rowCount(); ++r) ids << table->item(r, 1)->text();
    QVERIFY(ids.contains("org.rustytorch.grad-histogram"));
    const int failed_row = table->currentRow();
    QVERIFY(failed_row >= 0);
    QCOMPARE(table->item(failed_row, 4)->text(), QString("failed"));
    QVERIFY2(!dialog->details()->text().isEmpty(), "no details for the failed plugin");
    QTest::qWait(300);
    const QPixmap dialog_shot = dialog->grab();
    QVERIFY(dialog_shot.save(artifacts + "/plugins-dialog.png", "PNG"));
    qInfo("screenshot: %s/plugins-dialog.png", qPrintable(artifacts));

    // Checking Load on the plugin the crash prompt disabled enables it for the next start.
    const int ok_row = int(ids.indexOf("org.test.panel-ok"));
    QVERIFY(ok_row >= 0);
    QCOMPARE(table->item(ok_row, 0)->checkState(), Qt::Unchecked);
    table->item(ok_row, 0)->setCheckState(Qt::Checked);
    QVERIFY(!rt::plugin::PluginSettings::load().disabled.count("org.test.panel-ok"));
    dialog->close();
  }
};

QTEST_MAIN(StudioPluginsTest)
#include "test_studio_plugins.moc"
