// The Variables panel: lists tensors, modules, arrays and scalars with type, shape, dtype, device and size;
// refreshes WHILE a cell runs (snapshots arrive mid-cell and the values move), without blocking the GUI; computes
// tensor statistics on demand.
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QTableView>
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

class VariablesPanelTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<IsolatedSettings> settings_;
  std::unique_ptr<KernelClient> kernel_;
  PanelRegistry panels_;
  std::unique_ptr<MainWindow> w_;
  VariablesWidget* panel_ = nullptr;

  int row_of(const QString& name) {
    for (int r = 0; r < panel_->model().rowCount(); ++r)
      if (panel_->model().index(r, VariablesModel::name_column).data().toString() == name) return r;
    return -1;
  }
  QString cell_text(const QString& name, int column) {
    const int r = row_of(name);
    return r < 0 ? QString() : panel_->model().index(r, column).data().toString();
  }
  void run(const std::string& code) {
    w_->new_notebook();
    w_->document()->set_source(0, code);
    w_->view()->selectCell(0);
    w_->view()->runSelectedInPlace();
  }
  bool wait_idle(int ms = 60000) {
    return wait_until([&] { return !w_->view()->is_busy() && kernel_->state() == KernelState::idle; }, ms);
  }

 private slots:
  void initTestCase() {
    settings_ = std::make_unique<IsolatedSettings>();
    kernel_ = std::make_unique<KernelClient>();
    register_builtin_panels(panels_);
    w_ = std::make_unique<MainWindow>(panels_, *kernel_);
    w_->show();
    panel_ = qobject_cast<VariablesWidget*>(w_->panel_widget("variables"));
    QVERIFY(panel_);
    QVERIFY(panel_->isVisible());
    QVERIFY(wait_until([&] { return kernel_->state() == KernelState::idle; }, 30000));
  }
  void cleanupTestCase() {
    w_.reset();
    kernel_.reset();
  }

  void lists_tensors_modules_arrays_and_scalars() {
    ModalAnswerer discard("unsaved", "Discard");
    run("import numpy as np\nimport rustytorch as rt\nfrom rustytorch import nn\n"
        "weights = rt.randn(64, 10)\nweights.requires_grad_(True)\n"
        "model = nn.Linear(64, 10)\narr = np.zeros((3, 5), dtype=np.float64)\n"
        "lr = 0.001\nepochs = 30\nname = 'digits'\n_hidden = 1\n");
    QVERIFY(wait_idle());
    QVERIFY(wait_until([&] { return row_of("weights") >= 0 && row_of("name") >= 0; }, 10000));
    QCOMPARE(row_of("_hidden"), -1);
    QCOMPARE(row_of("np"), -1);  // modules are not variables
    QVERIFY2(cell_text("weights", VariablesModel::type_column).startsWith("Tensor"),
             qPrintable(cell_text("weights", VariablesModel::type_column)));
    QVERIFY(cell_text("weights", VariablesModel::type_column).contains("grad"));
    QCOMPARE(cell_text("weights", VariablesModel::shape_column), QStringLiteral("[64, 10]"));
    QCOMPARE(cell_text("weights", VariablesModel::dtype_column), QStringLiteral("float32"));
    QCOMPARE(cell_text("weights", VariablesModel::device_column), QStringLiteral("cpu"));
    QCOMPARE(cell_text("weights", VariablesModel::size_column), QStringLiteral("2.5 KiB"));
    QCOMPARE(cell_text("model", VariablesModel::type_column), QStringLiteral("Linear"));
    QVERIFY2(cell_text("model", VariablesModel::value_column).contains("650"),
             qPrintable(cell_text("model", VariablesModel::value_column)));
    QCOMPARE(cell_text("arr", VariablesModel::shape_column), QStringLiteral("[3, 5]"));
    QCOMPARE(cell_text("arr", VariablesModel::dtype_column), QStringLiteral("float64"));
    QCOMPARE(cell_text("arr", VariablesModel::size_column), QStringLiteral("120 B"));
    QCOMPARE(cell_text("epochs", VariablesModel::value_column), QStringLiteral("30"));
    QCOMPARE(cell_text("lr", VariablesModel::value_column), QStringLiteral("0.001"));
    QVERIFY(cell_text("name", VariablesModel::value_column).contains("digits"));
    QCOMPARE(panel_->table()->model()->columnCount(), int(VariablesModel::column_count));
  }

  void compute_stats_on_demand() {
    ModalAnswerer discard("unsaved", "Discard");
    run("import math\nimport rustytorch as rt\nt = rt.tensor([1.0, 2.0, 3.0, float('nan'), 6.0])\n");
    QVERIFY(wait_idle());
    QVERIFY(wait_until([&] { return row_of("t") >= 0; }, 10000));
    QVERIFY(!cell_text("t", VariablesModel::value_column).contains("mean"));
    panel_->compute_stats("t");
    QVERIFY(wait_until([&] { return cell_text("t", VariablesModel::value_column).contains("mean"); }, 10000));
    const QString stats = cell_text("t", VariablesModel::value_column);
    QVERIFY2(stats.contains("min 1") && stats.contains("max 6") && stats.contains("mean 3") && stats.contains("NaN 1"),
             qPrintable(stats));
  }

  void refreshes_while_a_cell_runs_without_blocking_the_gui() {
    ModalAnswerer discard("unsaved", "Discard");
    run("import time\nimport rustytorch as rt\n"
        "for step in range(40):\n"
        "    progress = rt.full((step + 1,), float(step))\n"
        "    time.sleep(0.1)\n");
    QVERIFY(wait_until([&] { return kernel_->state() == KernelState::busy; }, 10000));
    QStringList seen_steps;
    int mid_cell_snapshots = 0;
    qint64 worst_gap_ms = 0;
    QElapsedTimer gap;
    gap.start();
    connect(panel_, &VariablesWidget::snapshotApplied, this, [&](const VariablesSnapshot& s) {
      if (!s.cell_running) return;
      ++mid_cell_snapshots;
      const QString step = cell_text("step", VariablesModel::value_column);
      if (!step.isEmpty() && !seen_steps.contains(step)) seen_steps << step;
    });
    // The GUI thread keeps turning: measure the longest gap between two event-loop iterations.
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 3000) {
      QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
      worst_gap_ms = std::max(worst_gap_ms, gap.restart());
    }
    QVERIFY2(kernel_->state() == KernelState::busy, "the cell should still be running");
    QVERIFY2(mid_cell_snapshots >= 3, qPrintable(QString::number(mid_cell_snapshots)));
    QVERIFY2(seen_steps.size() >= 3, qPrintable(seen_steps.join(",")));  // the values moved during the cell
    QVERIFY(cell_text("progress", VariablesModel::type_column).startsWith("Tensor"));
    qInfo("%d snapshots during 3 s of a running cell; steps seen %s; longest GUI stall %lld ms", mid_cell_snapshots,
          qPrintable(seen_steps.join(",")), static_cast<long long>(worst_gap_ms));
    QVERIFY2(worst_gap_ms < 1000, qPrintable(QString::number(worst_gap_ms)));
    w_->view()->interrupt();
    QVERIFY(wait_idle());
    disconnect(panel_, &VariablesWidget::snapshotApplied, this, nullptr);
  }

  void restart_empties_the_panel() {
    ModalAnswerer yes("restart", "Restart");
    w_->view()->restartNow();
    QVERIFY(wait_until([&] { return kernel_->state() == KernelState::idle && panel_->model().rowCount() == 0; },
                       30000));
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  configure_application(app);
  VariablesPanelTest test;
  return run_qtest(test, argc, argv);
}

#include "test_variables_panel.moc"
