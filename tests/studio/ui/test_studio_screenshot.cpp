// The main window after running the quickstart notebook, on a real X server (run under `xvfb-run -a`), saved as
// build/test-artifacts/studio-main-window.png. Checks that every cell ran without an error, that the plot and the
// profiler table arrived as outputs, and that the variables panel lists the training's tensors.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QPixmap>
#include <QScrollArea>
#include <QScrollBar>
#include <QtTest>

#include <memory>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook_view/notebook_view.h"
#include "panels/builtin_panels.h"
#include "panels/variables_panel.h"
#include "shell/main_window.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"

using namespace rt::studio;
using namespace rt::studio::test;

class StudioScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void quickstart_main_window() {
    IsolatedSettings settings;
    // Run a copy, so the sample stays unexecuted, in a samples-like tree (the notebook imports ../digits_data.py).
    const QString samples = source_dir() + "/samples";
    QVERIFY(QDir().mkpath(settings.path("samples/notebooks")));
    QVERIFY(QFile::link(samples + "/digits_data.py", settings.path("samples/digits_data.py")));
    QVERIFY(QFile::link(samples + "/data", settings.path("samples/data")));
    const QString copy = settings.path("samples/notebooks/quickstart.ipynb");
    QVERIFY(QFile::copy(samples + "/notebooks/quickstart.ipynb", copy));

    StudioOptions options;
    options.notebook = copy.toStdString();
    StudioSession session(options, register_builtin_panels);
    bool ready = false;
    connect(&session, &StudioSession::ready, this, [&] { ready = true; });
    session.start();
    MainWindow& w = session.window();
    w.resize(1500, 940);
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(wait_until([&] { return ready; }, 30000));
    QVERIFY(wait_until([&] { return session.kernel().state() == KernelState::idle; }, 30000));

    w.view()->runAll();
    QVERIFY(wait_until([&] { return !w.view()->is_busy(); }, 180000));
    NotebookDocument& doc = *w.document();
    bool png = false, table = false;
    for (std::size_t i = 0; i < doc.cell_count(); ++i) {
      const Cell& c = doc.cell(i);
      if (!c.is_code()) continue;
      QVERIFY2(c.execution_count.has_value(), qPrintable(QString("cell %1 did not run").arg(i)));
      for (const auto& o : c.outputs) {
        QVERIFY2(o["output_type"] != "error", qPrintable(QString::fromStdString(o.dump())));
        if (o.contains("data") && o["data"].contains("image/png")) png = true;
        if (o["output_type"] == "stream" && o["text"].get<std::string>().find("Self CPU") != std::string::npos)
          table = true;
      }
    }
    QVERIFY(png);
    QVERIFY(table);

    auto* variables = qobject_cast<VariablesWidget*>(w.panel_widget("variables"));
    QVERIFY(variables);
    QVERIFY(wait_until([&] { return variables->model().rowCount() >= 8; }, 10000));
    // Show the plot at the end of the notebook.
    w.view()->selectCell(w.view()->cell_count() - 1);
    w.view()->flushOutputs();
    QTest::qWait(300);
    for (QScrollArea* area : w.view()->findChildren<QScrollArea*>())
      area->verticalScrollBar()->setValue(area->verticalScrollBar()->maximum());
    QTest::qWait(300);

    const QString artifacts = build_dir() + "/test-artifacts";
    QDir().mkpath(artifacts);
    const QString png_path = artifacts + "/studio-main-window.png";
    const QPixmap shot = w.grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(png_path, "PNG"));
    qInfo("screenshot: %s (%dx%d)", qPrintable(png_path), shot.width(), shot.height());
    // Not blank: the notebook, the panel and the plot make many distinct colours.
    const QImage image = shot.toImage().scaled(200, 120);
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 50, qPrintable(QString::number(colours.size())));
    doc.replace_notebook(doc.notebook(), false);  // nothing to ask about when the window goes
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  configure_application(app);
  StudioScreenshotTest test;
  return run_qtest(test, argc, argv);
}

#include "test_studio_screenshot.moc"
