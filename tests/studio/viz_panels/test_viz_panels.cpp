// The visualizer panels in a window on a real X server (run under `xvfb-run -a`): registered with the
// shell's PanelRegistry, the timeline panel opens a store holding a recorded training and draws it
// (saved as <build>/test-artifacts/viz-panel-timeline.png), lists a session that records in this process
// and follows it (appending what each refresh read to the view it shows), and reports a file it cannot open
// without losing what it shows.
#include <QApplication>
#include <QComboBox>
#include <QMainWindow>
#include <QWheelEvent>
#include <QtTest>

#include "imgui_test_contents.h"
#include "rt/prof/session.h"
#include "rt/rt.h"
#include "rt/viz/timeline.h"
#include "shell/panel.h"
#include "viz_panels/visualizer_panels.h"
#include "viz_panels/viz_panel_widget.h"
#include "viz_training_fixture.h"

using namespace rt::studio;
using namespace rt::studio::test;

class VizPanelsTest : public QObject {
  Q_OBJECT

 private slots:
  void registers_three_bottom_panels() {
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QCOMPARE(registry.panels().size(), size_t(3));
    for (const char* id : {"timeline", "memory", "scalars"}) {
      StudioPanel* p = registry.find(QString::fromLatin1(id));
      QVERIFY2(p, id);
      QCOMPARE(p->default_area(), Qt::BottomDockWidgetArea);
      QCOMPARE(p->starts_visible(), QString(id) != "scalars");
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, register_visualizer_panels(registry));
  }

  void timeline_panel_opens_a_store_and_draws_its_session() {
    const auto a = record_mlp_training("first run", 3);
    const auto b = record_mlp_training("second run", 4);
    const QString store = save_store("viz-panel.sqlite", {a, b});

    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1400, 600);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("timeline")->create_widget({}, &window));
    QVERIFY(panel);
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QVERIFY(panel->picker()->openStore(store));
    QVERIFY(panel->picker()->errorText().isEmpty());
    // Both stored sessions are listed; the newest is shown.
    int stored = 0;
    for (int i = 0; i < panel->picker()->count(); ++i) stored += panel->picker()->entryText(i).contains("viz-panel.sqlite");
    QCOMPARE(stored, 2);
    QVERIFY(panel->content());
    QCOMPARE(panel->content()->view(), VizView::Timeline);
    QCOMPARE(QString::fromStdString(panel->content()->data().name), QStringLiteral("second run"));
    QCOMPARE(panel->content()->data().ops.size(), b->ops.size());

    ImGuiHostWidget* host = panel->host();
    QVERIFY(wait_until([&] { return host->framesDrawn() >= 2; }, 10000));
    settle_count([&] { return host->framesDrawn(); });
    QVERIFY2(host->glProblem().isEmpty(), qPrintable(host->glProblem()));
    const QImage image = host->grabFramebuffer();
    QVERIFY(image.save(artifacts_dir() + "/viz-panel-timeline.png", "PNG"));
    QVERIFY2(distinct_colors(image, image.rect()) > 20, qPrintable(QString::number(distinct_colors(image, image.rect()))));
    const auto& layout = panel->content()->timeline()->layout();
    QVERIFY(layout.tracks.size() >= 2);

    // Click on the widest op of the main thread: it becomes the selection.
    rt::viz::draw::TimelineDraw& tl = *panel->content()->timeline();
    const auto& main_row = layout.tracks[1];
    const rt::viz::TrackLevel& level0 = tl.model().tracks()[main_row.track].levels.at(0);
    uint32_t widest = 0;
    for (uint32_t i = 0; i < level0.size(); ++i)
      if (level0.ends[i] - level0.starts[i] > level0.ends[widest] - level0.starts[widest]) widest = i;
    const rt::viz::EventRef target{main_row.track, 0, widest};
    const QPoint on_event(int(layout.canvas_min.x + tl.view().x_of((level0.starts[widest] + level0.ends[widest]) / 2)),
                          int(main_row.top + layout.row_height / 2));
    QTest::mouseMove(host, on_event);
    settle_count([&] { return host->framesDrawn(); });
    QTest::mouseClick(host, Qt::LeftButton, Qt::NoModifier, on_event);
    QVERIFY(wait_until([&] { return tl.selected().has_value(); }, 5000));
    QCOMPARE(*tl.selected(), target);
    // The wheel zooms in about the mouse: the time under it stays put.
    const int64_t span = tl.view().span_ns();
    const int64_t under = tl.view().time_at(on_event.x() - layout.canvas_min.x);
    QWheelEvent wheel(QPointF(on_event), QPointF(host->mapToGlobal(on_event)), QPoint(), QPoint(0, 240), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(host, &wheel);
    QVERIFY(wait_until([&] { return tl.view().span_ns() < span; }, 5000));
    const int64_t still_under = tl.view().time_at(on_event.x() - layout.canvas_min.x);
    QVERIFY2(std::abs(still_under - under) <= 2 * int64_t(tl.view().ns_per_px()) + 1,
             qPrintable(QString("%1 vs %2").arg(still_under).arg(under)));
    settle_count([&] { return host->framesDrawn(); });
    QVERIFY(host->grabFramebuffer().save(artifacts_dir() + "/viz-panel-timeline-clicked.png", "PNG"));
    // Keys pan like Tracy's: D (or Right) shows later times while it is held.
    host->setFocus();
    const int64_t before_key = tl.view().t0();
    QTest::keyPress(host, Qt::Key_D);
    QVERIFY(wait_until([&] { return tl.view().t0() > before_key; }, 5000));
    QTest::keyRelease(host, Qt::Key_D);
    settle_count([&] { return host->framesDrawn(); });

    // The first stored session, chosen from the list.
    for (int i = 0; i < panel->picker()->count(); ++i)
      if (panel->picker()->entryText(i).contains("first run")) QVERIFY(panel->picker()->choose(i));
    QCOMPARE(QString::fromStdString(panel->content()->data().name), QStringLiteral("first run"));

    // Opening the same store again lists its sessions once.
    QVERIFY(panel->picker()->openStore(store));
    stored = 0;
    for (int i = 0; i < panel->picker()->count(); ++i) stored += panel->picker()->entryText(i).contains("viz-panel.sqlite");
    QCOMPARE(stored, 2);
    QCOMPARE(QString::fromStdString(panel->content()->data().name), QStringLiteral("second run"));
    for (int i = 0; i < panel->picker()->count(); ++i)
      if (panel->picker()->entryText(i).contains("first run")) QVERIFY(panel->picker()->choose(i));

    // A store that does not exist: the reason is shown and the session stays.
    QVERIFY(!panel->picker()->openStore(artifacts_dir() + "/no-such-store.sqlite"));
    QVERIFY2(panel->picker()->errorText().contains("no such file"), qPrintable(panel->picker()->errorText()));
    QCOMPARE(QString::fromStdString(panel->content()->data().name), QStringLiteral("first run"));
  }

  void memory_panel_follows_a_session_recording_in_this_process() {
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1200, 500);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("memory")->create_widget({}, &window));
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    rt::prof::SessionOptions options;
    options.profile_memory = true;
    options.name = "notebook cell";
    options.flush_interval = std::chrono::milliseconds(20);
    rt::prof::Session live(options);
    live.start();
    rt::Tensor t = rt::randn({256, 256});
    panel->picker()->refreshLiveSessions();
    int index = -1;
    for (int i = 0; i < panel->picker()->count(); ++i)
      if (panel->picker()->entryText(i).contains("notebook cell") && panel->picker()->entryText(i).contains("recording"))
        index = i;
    QVERIFY(index >= 0);
    QVERIFY(panel->picker()->choose(index));
    const size_t before = panel->content()->data().memory.size();
    // More allocations while recording: the picker's live refresh brings them into the view.
    std::vector<rt::Tensor> kept;
    for (int i = 0; i < 8; ++i) kept.push_back(rt::matmul(t, t));
    QVERIFY(wait_until([&] { return panel->content()->data().memory.size() >= before + 8; }, 10000));
    live.stop();
    QVERIFY(wait_until([&] { return panel->content()->data().complete; }, 5000));
    QVERIFY(panel->content()->memory());
    QVERIFY(!panel->content()->memory()->model().devices().empty());
    QVERIFY(wait_until([&] { return panel->host()->framesDrawn() >= 1; }, 10000));
  }

  void a_zoomed_timeline_stays_zoomed_while_the_session_records() {
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1200, 500);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("timeline")->create_widget({}, &window));
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    rt::prof::SessionOptions options;
    options.name = "live timeline";
    options.flush_interval = std::chrono::milliseconds(20);
    rt::prof::Session live(options);
    live.start();
    rt::Tensor t = rt::randn({64, 64});
    for (int i = 0; i < 20; ++i) t = rt::matmul(t, t) * 0.01;
    panel->picker()->refreshLiveSessions();
    QVERIFY(wait_until([&] { return panel->content() && panel->content()->data().name == "live timeline" &&
                                    !panel->content()->data().ops.empty(); }, 10000));
    const rt::viz::draw::TimelineDraw* first = panel->content()->timeline();
    QVERIFY(first);
    const int64_t t0 = first->model().first_ns(), t1 = t0 + (first->model().last_ns() - t0) / 2;
    panel->content()->timeline()->set_window(t0, t1);
    const size_t before = panel->content()->data().ops.size();
    for (int i = 0; i < 20; ++i) t = rt::matmul(t, t) * 0.01;
    QVERIFY(wait_until([&] { return panel->content()->data().ops.size() > before; }, 10000));
    QCOMPARE(panel->content()->timeline()->view().t0(), t0);
    QCOMPARE(panel->content()->timeline()->view().t1(), t1);
    live.stop();
  }

  void a_live_refresh_appends_to_the_view_it_shows() {
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1200, 500);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("timeline")->create_widget({}, &window));
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    int loads = 0, growths = 0;
    connect(panel->picker(), &SessionPicker::sessionLoaded, this, [&] { ++loads; });
    connect(panel->picker(), &SessionPicker::sessionGrew, this, [&] { ++growths; });

    rt::prof::SessionOptions options;
    options.name = "appended timeline";
    options.flush_interval = std::chrono::milliseconds(20);
    rt::prof::Session live(options);
    live.start();
    rt::Tensor t = rt::randn({64, 64});
    for (int i = 0; i < 10; ++i) t = rt::matmul(t, t) * 0.01;
    panel->picker()->refreshLiveSessions();
    QVERIFY(wait_until(
        [&] {
          return panel->content() && panel->content()->data().name == "appended timeline" &&
                 !panel->content()->data().ops.empty();
        },
        10000));
    SessionViewContent* shown = panel->content();
    const rt::prof::SessionData* data = &shown->data();
    rt::viz::draw::TimelineDraw& tl = *shown->timeline();
    const auto first_op = tl.model().find(rt::viz::EventSource::Op, 0);
    QVERIFY(first_op);
    tl.select(first_op);
    const int loads_before = loads;

    const size_t before = data->ops.size();
    for (int i = 0; i < 20; ++i) t = rt::matmul(t, t) * 0.01;
    QVERIFY(wait_until([&] { return panel->content()->data().ops.size() >= before + 40; }, 10000));
    // The same content and data grew: nothing was rebuilt.
    QCOMPARE(panel->content(), shown);
    QCOMPARE(&panel->content()->data(), data);
    QCOMPARE(loads, loads_before);
    QVERIFY(growths > 0);
    // The fitted window keeps fitting the growing session; the selection stays on its op.
    QCOMPARE(tl.view().t0(), tl.model().first_ns());
    QCOMPARE(tl.view().t1(), tl.model().last_ns());
    QVERIFY(tl.selected());
    QCOMPARE(tl.model().source(*tl.selected()), rt::viz::EventSource::Op);
    QCOMPARE(tl.model().record(*tl.selected()), uint32_t(0));
    // What was appended is what a view built from scratch on the same data holds.
    const rt::viz::TimelineModel fresh(std::make_shared<const rt::prof::SessionData>(*data));
    QCOMPARE(tl.model().event_count(), fresh.event_count());
    QCOMPARE(tl.model().tracks().size(), fresh.tracks().size());
    for (size_t k = 0; k < fresh.tracks().size(); ++k)
      for (size_t l = 0; l < fresh.tracks()[k].levels.size(); ++l)
        QVERIFY(tl.model().tracks()[k].levels.at(l).records == fresh.tracks()[k].levels[l].records);

    // Stopping sorts the session: one full load, complete.
    live.stop();
    QVERIFY(wait_until([&] { return panel->content()->data().complete; }, 5000));
    QCOMPARE(loads, loads_before + 1);
    QCOMPARE(panel->content()->data().ops.size(), live.data().ops.size());
  }

  void the_scalars_panel_adds_a_new_counter_to_the_charts_it_shows() {
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1000, 500);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("scalars")->create_widget({}, &window));
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    rt::prof::SessionOptions options;
    options.name = "live scalars";
    options.flush_interval = std::chrono::milliseconds(20);
    rt::prof::Session live(options);
    live.start();
    live.counter("loss", 2.0);
    panel->picker()->refreshLiveSessions();
    QVERIFY(wait_until(
        [&] {
          return panel->content() && panel->content()->scalars() && panel->content()->data().name == "live scalars" &&
                 panel->content()->scalars()->names().size() == 1;
        },
        10000));
    SessionViewContent* shown = panel->content();
    for (int i = 0; i < 3; ++i) {
      live.counter("loss", 1.0 / (i + 1));
      live.counter("lr", 0.1);
      live.step();
    }
    QVERIFY(wait_until([&] { return shown->scalars()->names().size() == 2; }, 10000));
    QCOMPARE(panel->content(), shown);
    QVERIFY(wait_until([&] { return shown->scalars()->axis() == rt::viz::OverlayAxis::Step; }, 5000));  // steps came
    live.stop();
  }

  // A store written by `rtorch launch --store` holds one session per rank with the job's metadata: the timeline
  // panel offers the job's ranks as one entry and shows both ranks' threads side by side; the memory panel does
  // not offer it. Saved as <build>/test-artifacts/viz-panel-job-timeline.png.
  void timeline_panel_shows_a_launched_jobs_ranks_side_by_side() {
    std::vector<std::shared_ptr<const rt::prof::SessionData>> ranks;
    for (int rank = 0; rank < 2; ++rank) {
      auto d = std::make_shared<rt::prof::SessionData>(*record_mlp_training("rank run", 3));
      d->name = "rank " + std::to_string(rank) + " of 2 \u00b7 train.py";
      d->metadata["job_id"] = "j42";
      d->metadata["rank"] = std::to_string(rank);
      d->metadata["world_size"] = "2";
      d->metadata["restart_count"] = "0";
      ranks.push_back(std::move(d));
    }
    const auto other = record_mlp_training("not a rank", 2);
    const QString store = save_store("viz-panel-job.sqlite", {other, ranks[0], ranks[1]});

    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1400, 700);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("timeline")->create_widget({}, &window));
    QVERIFY(panel);
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QVERIFY(panel->picker()->openStore(store));
    int job_entry = -1;
    int job_entries = 0;
    for (int i = 0; i < panel->picker()->count(); ++i)
      if (panel->picker()->entryText(i).contains("job j42: all 2 ranks")) {
        job_entry = i;
        ++job_entries;
      }
    QCOMPARE(job_entries, 1);
    QVERIFY(panel->picker()->choose(job_entry));
    QVERIFY2(panel->picker()->errorText().isEmpty(), qPrintable(panel->picker()->errorText()));
    QCOMPARE(QString::fromStdString(panel->content()->data().name), QStringLiteral("job j42: 2 ranks"));
    QCOMPARE(panel->content()->data().ops.size(), ranks[0]->ops.size() + ranks[1]->ops.size() +
                                                      ranks[0]->steps.size() + ranks[1]->steps.size());

    // The timeline model has both ranks' threads, each rank's own.
    const rt::viz::TimelineModel& model = panel->content()->timeline()->model();
    QStringList names;
    for (const rt::viz::Track& t : model.tracks()) names << QString::fromStdString(t.name);
    for (const char* name : {"rank 0 \u00b7 main", "rank 1 \u00b7 main", "rank 0 \u00b7 steps", "rank 1 \u00b7 steps",
                             "rank 0 \u00b7 loss", "rank 1 \u00b7 loss"})
      QVERIFY2(names.contains(QString::fromUtf8(name)), qPrintable(names.join(", ")));
    for (const QString& n : names) QVERIFY2(n.startsWith("rank 0 \u00b7 ") || n.startsWith("rank 1 \u00b7 "), qPrintable(n));

    ImGuiHostWidget* host = panel->host();
    QVERIFY(wait_until([&] { return host->framesDrawn() >= 2; }, 10000));
    settle_count([&] { return host->framesDrawn(); });
    QVERIFY2(host->glProblem().isEmpty(), qPrintable(host->glProblem()));
    QVERIFY(host->grabFramebuffer().save(artifacts_dir() + "/viz-panel-job-timeline.png", "PNG"));

    // The memory panel lists the ranks' sessions but no job entry.
    auto* memory = qobject_cast<VizPanelWidget*>(registry.find("memory")->create_widget({}, &window));
    QVERIFY(memory->picker()->openStore(store));
    for (int i = 0; i < memory->picker()->count(); ++i) QVERIFY(!memory->picker()->entryText(i).contains("job j42"));
    delete memory;
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  VizPanelsTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_viz_panels.moc"
