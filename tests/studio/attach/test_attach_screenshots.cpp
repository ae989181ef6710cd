// Screenshots of remote attach on a real X server (run under `xvfb-run -a`): two `rtorch run --attach` processes
// as ranks 0 and 1 of one job; the Attach dialog lists the job and, once attached, the ranks' live figures
// (<build>/test-artifacts/attach-dialog.png); the timeline panel follows the attached job and shows both ranks'
// tracks side by side (timeline-attached-job.png).
#include <QApplication>
#include <QMainWindow>
#include <QTableWidget>
#include <QtTest>

#include "attach/attach_dialog.h"
#include "attach/attached_sessions.h"
#include "attach_test_process.h"
#include "imgui_test_contents.h"
#include "qt_wait.h"
#include "rt/viz/timeline.h"
#include "shell/panel.h"
#include "viz_panels/visualizer_panels.h"
#include "viz_panels/viz_panel_widget.h"

using namespace rt::studio;
using namespace rt::studio::test;

class AttachScreenshotsTest : public QObject {
  Q_OBJECT

 private slots:
  void attach_dialog_and_attached_timeline() {
    PrivateRuntimeDir dir;
    AttachableProcess rank0(dir, "mnist-ddp-7f3a", 0, 2, 0, 0.002);
    AttachableProcess rank1(dir, "mnist-ddp-7f3a", 1, 2, 0, 0.002);
    QVERIFY2(rank0.wait_ready(120000), rank0.log().c_str());
    QVERIFY2(rank1.wait_ready(120000), rank1.log().c_str());

    // The timeline panel, as the studio docks it, follows what gets attached.
    PanelRegistry registry;
    register_visualizer_panels(registry);
    QMainWindow window;
    window.resize(1500, 400);
    auto* panel = qobject_cast<VizPanelWidget*>(registry.find("timeline")->create_widget({}, &window));
    QVERIFY(panel);
    window.setCentralWidget(panel);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    AttachDialog dialog;
    dialog.resize(1000, 400);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QVERIFY(wait_until([&] { return dialog.jobCount() == 1 && !dialog.listing(); }, 30000));
    QVERIFY(dialog.selectJob("mnist-ddp-7f3a"));
    QCOMPARE(dialog.rankTable()->rowCount(), 2);
    QVERIFY(dialog.attachSelected());
    // Both ranks live, with a few steps timed.
    QTableWidget* ranks = dialog.rankTable();
    QVERIFY(wait_until([&] {
      for (int r = 0; r < 2; ++r)
        if (ranks->item(r, 7)->text() != "live" || ranks->item(r, 4)->text() == QString::fromUtf8("\u2014") ||
            ranks->item(r, 3)->text().toInt() < 20)
          return false;
      return true;
    }, 120000));
    QTest::qWait(600);
    const QString artifacts = artifacts_dir();
    const QPixmap dialog_shot = dialog.grab();
    QVERIFY(dialog_shot.save(artifacts + "/attach-dialog.png", "PNG"));
    qInfo("screenshot: %s/attach-dialog.png", qPrintable(artifacts));

    // The timeline shows the job's "all ranks" entry: both ranks' threads, side by side.
    SessionPicker* picker = panel->picker();
    QVERIFY(wait_until([&] { return picker->entryText(0).contains("mnist-ddp-7f3a: all 2 ranks (attached)"); }, 10000));
    QVERIFY(picker->choose(0));
    QVERIFY(wait_until([&] {
      if (!panel->content() || !panel->content()->timeline()) return false;
      QStringList names;
      for (const rt::viz::Track& t : panel->content()->timeline()->model().tracks()) names << QString::fromStdString(t.name);
      return names.contains(QString::fromUtf8("rank 0 \u00b7 main")) && names.contains(QString::fromUtf8("rank 1 \u00b7 main"));
    }, 30000));
    // Zoom to a few recent steps, as one does to look at a live job.
    {
      auto& tl = *panel->content()->timeline();
      const int64_t last = tl.model().last_ns();
      tl.set_window(last - 14'000'000, last - 2'000'000);
    }
    ImGuiHostWidget* host = panel->host();
    QVERIFY(wait_until([&] { return host->framesDrawn() >= 2; }, 10000));
    QTest::qWait(2500);  // one merged refresh: the view keeps its window
    settle_count([&] { return host->framesDrawn(); });
    QVERIFY2(host->glProblem().isEmpty(), qPrintable(host->glProblem()));
    const QPixmap timeline_shot = window.grab();
    QVERIFY(timeline_shot.save(artifacts + "/timeline-attached-job.png", "PNG"));
    qInfo("screenshot: %s/timeline-attached-job.png", qPrintable(artifacts));
    // Not blank: tracks, ops and labels make many distinct colours.
    const QImage small = timeline_shot.toImage().scaled(300, 120);
    QSet<QRgb> colours;
    for (int y = 0; y < small.height(); ++y)
      for (int x = 0; x < small.width(); ++x) colours.insert(small.pixel(x, y));
    QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    AttachedSessions::instance().clear();
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  AttachScreenshotsTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_attach_screenshots.moc"
