// Running through the window's menus: Run Cell / Run All / Run Above / Run Below, the three interrupt cases
// (busy Python loop, time.sleep, a long engine op) with the queued cells cancelled, Restart, outputs and error
// tracebacks landing in the document, Clear Outputs, and the status bar's kernel states with a live run time.
#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QtTest>

#include <memory>

#include "kernel/qt/kernel_client.h"
#include "notebook/notebook_document.h"
#include "notebook_view/notebook_view.h"
#include "panels/builtin_panels.h"
#include "shell/kernel_status_label.h"
#include "shell/main_window.h"
#include "shell/studio_startup.h"
#include "studio_test_support.h"

using namespace rt::studio;
using namespace rt::studio::test;
using nlohmann::json;

class ShellRunTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<IsolatedSettings> settings_;
  std::unique_ptr<KernelClient> kernel_;
  PanelRegistry panels_;
  std::unique_ptr<MainWindow> w_;

  NotebookDocument& doc() { return *w_->document(); }
  // A fresh untitled notebook holding `sources` as code cells.
  void load(const std::vector<std::string>& sources) {
    ModalAnswerer discard("unsaved", "Discard");  // the previous test's outputs are unsaved changes
    w_->new_notebook();
    NotebookDocument& d = doc();
    d.set_source(0, sources.at(0));
    for (std::size_t i = 1; i < sources.size(); ++i) d.insert_cell(i, CellType::code, sources[i]);
    w_->view()->selectCell(0);
  }
  bool wait_idle(int ms = 60000) {
    return wait_until([&] { return !w_->view()->is_busy() && kernel_->state() == KernelState::idle; }, ms);
  }
  bool wait_running(int ms = 20000) {
    return wait_until([&] { return kernel_->state() == KernelState::busy && w_->view()->is_busy(); }, ms);
  }
  void trigger(const char* name) {
    QAction* a = w_->action(name);
    QVERIFY2(a, name);
    a->trigger();
  }
  const std::vector<json>& outputs(std::size_t i) { return doc().cell(i).outputs; }
  static QString all_text(const std::vector<json>& outs) { return QString::fromStdString(json(outs).dump()); }
  // Interrupts the running first cell; returns seconds from the action to the view being idle.
  double interrupt_and_time() {
    QElapsedTimer clock;
    clock.start();
    w_->action("actionInterrupt")->trigger();
    if (!wait_idle(20000)) return -1;
    return clock.elapsed() / 1000.0;
  }

 private slots:
  void initTestCase() {
    settings_ = std::make_unique<IsolatedSettings>();
    kernel_ = std::make_unique<KernelClient>();
    register_builtin_panels(panels_);
    w_ = std::make_unique<MainWindow>(panels_, *kernel_);
    w_->show();
    QVERIFY(wait_until([&] { return kernel_->state() == KernelState::idle; }, 30000));
  }
  void cleanupTestCase() {
    w_.reset();
    kernel_.reset();
  }

  void run_cell_writes_results_streams_and_counts() {
    load({"print('hello from a cell')\n1 + 1", "import rustytorch as rt\nrt.ones(2, 3).sum()"});
    trigger("actionRunCell");  // Shift+Enter: run and select the next cell
    QVERIFY(wait_idle());
    QCOMPARE(w_->view()->active_index(), 1);
    QVERIFY(all_text(outputs(0)).contains("hello from a cell"));
    bool result = false;
    for (const json& o : outputs(0))
      if (o["output_type"] == "execute_result") result = o["data"]["text/plain"] == "2";
    QVERIFY2(result, qPrintable(all_text(outputs(0))));
    QVERIFY(doc().cell(0).execution_count.has_value());
    trigger("actionRunInPlace");
    QVERIFY(wait_idle());
    QCOMPARE(w_->view()->active_index(), 1);
    QVERIFY2(all_text(outputs(1)).contains("tensor(6.)"), qPrintable(all_text(outputs(1))));
    QCOMPARE(*doc().cell(1).execution_count, *doc().cell(0).execution_count + 1);
    QVERIFY(w_->isWindowModified());  // outputs are changes to the notebook
  }

  void run_all_above_below_and_clear_outputs() {
    load({"a = 1", "b = a + 1", "c = b + 1\nc"});
    trigger("actionRunAll");
    QVERIFY(wait_idle());
    for (std::size_t i = 0; i < 3; ++i) QVERIFY(doc().cell(i).execution_count.has_value());
    QVERIFY(all_text(outputs(2)).contains("\"3\""));
    trigger("actionClearAllOutputs");
    for (std::size_t i = 0; i < 3; ++i) QVERIFY(!doc().cell(i).execution_count.has_value());
    w_->view()->selectCell(2);
    trigger("actionRunAbove");
    QVERIFY(wait_idle());
    QVERIFY(doc().cell(0).execution_count && doc().cell(1).execution_count);
    QVERIFY(!doc().cell(2).execution_count);
    w_->view()->selectCell(1);
    trigger("actionClearOutputs");
    QVERIFY(!doc().cell(1).execution_count);
    trigger("actionRunBelow");
    QVERIFY(wait_idle());
    QVERIFY(doc().cell(1).execution_count && doc().cell(2).execution_count);
  }

  void error_traceback_points_into_the_cell_and_stops_run_all() {
    load({"def f(x):\n    return x / 0\n\nf(3)", "never = True"});
    trigger("actionRunAll");
    QVERIFY(wait_idle());
    const json* error = nullptr;
    for (const json& o : outputs(0))
      if (o["output_type"] == "error") error = &o;
    QVERIFY2(error, qPrintable(all_text(outputs(0))));
    QCOMPARE(QString::fromStdString((*error)["ename"]), QStringLiteral("ZeroDivisionError"));
    const QString tb = QString::fromStdString((*error)["traceback"].dump());
    QVERIFY2(tb.contains("<cell"), qPrintable(tb));
    QVERIFY2(tb.contains("return x / 0"), qPrintable(tb));
    QVERIFY2(tb.contains("f(3)"), qPrintable(tb));
    QVERIFY(!doc().cell(1).execution_count.has_value());  // run all stopped at the error
  }

  void interrupt_busy_loop_sleep_and_engine_op_and_cancel_queued() {
    struct Case { const char* name; std::string code; };
    const std::vector<Case> cases = {
        {"busy python loop", "n = 0\nwhile True:\n    n += 1"},
        {"time.sleep", "import time\ntime.sleep(120)"},
        {"long engine op", "import rustytorch as rt\na = rt.randn(48, 512, 512, dtype=rt.float64)\n"
                           "for _ in range(100):\n    b = rt.matmul(a, a)"},
    };
    for (const Case& c : cases) {
      load({c.code, "queued_marker = 1"});
      trigger("actionRunAll");
      QVERIFY2(wait_running(), c.name);
      QTest::qWait(700);  // well inside the cell
      QVERIFY2(w_->view()->is_busy(), c.name);
      const double seconds = interrupt_and_time();
      QVERIFY2(seconds >= 0, c.name);
      qInfo("interrupt of %s: idle %.3f s after Kernel > Interrupt", c.name, seconds);
      QVERIFY2(all_text(outputs(0)).contains("KeyboardInterrupt"), qPrintable(all_text(outputs(0))));
      QVERIFY2(!doc().cell(1).execution_count.has_value(), c.name);  // the queued cell was cancelled
    }
    // The kernel is usable afterwards and the cancelled cell never ran.
    load({"'queued_marker' in globals()"});
    trigger("actionRunInPlace");
    QVERIFY(wait_idle());
    QVERIFY2(all_text(outputs(0)).contains("False"), qPrintable(all_text(outputs(0))));
  }

  void restart_gives_a_fresh_namespace() {
    load({"survivor = 42", "survivor"});
    trigger("actionRunAll");
    QVERIFY(wait_idle());
    QVERIFY(all_text(outputs(1)).contains("42"));
    {
      ModalAnswerer cancel("restart", "Cancel");
      trigger("actionRestart");
      QVERIFY(wait_until([&] { return cancel.answered() == 1; }, 5000));
    }
    QVERIFY(kernel_->kernel().next_execution_count() > 1);  // not restarted
    ModalAnswerer yes("restart", "Restart");
    trigger("actionRestart");
    QVERIFY(wait_until([&] { return yes.answered() == 1; }, 5000));
    // restart() is asynchronous: wait for the count to go back to 1 with the kernel idle again.
    QVERIFY(wait_until([&] {
      return kernel_->kernel().next_execution_count() == 1 && kernel_->state() == KernelState::idle;
    }, 30000));
    w_->view()->selectCell(1);
    trigger("actionRunInPlace");
    QVERIFY(wait_idle());
    QVERIFY2(all_text(outputs(1)).contains("NameError"), qPrintable(all_text(outputs(1))));
    QCOMPARE(*doc().cell(1).execution_count, 1);
  }

  void status_bar_shows_states_and_a_live_run_time() {
    KernelStatusLabel* status = w_->kernel_status();
    QVERIFY(wait_idle());
    QVERIFY2(wait_until([&] { return status->text().startsWith("Kernel idle"); }, 10000), qPrintable(status->text()));
    QCOMPARE(status->property("kernelState").toString(), QStringLiteral("idle"));
    load({"import time\ntime.sleep(1.5)", "time.sleep(0.1)"});
    trigger("actionRunAll");
    QVERIFY(wait_until([&] { return status->text().contains("cell ["); }, 10000));
    QCOMPARE(status->property("kernelState").toString(), QStringLiteral("busy"));
    QVERIFY2(status->text().startsWith("Kernel busy · cell ["), qPrintable(status->text()));
    const QString early = status->text();
    QTest::qWait(400);
    QVERIFY2(status->text() != early, qPrintable(early + " / " + status->text()));  // the time counts up
    QVERIFY(wait_idle());
    QVERIFY2(wait_until([&] { return status->text().startsWith("Kernel idle · last cell"); }, 10000),
             qPrintable(status->text()));

    KernelStatusLabel detached;
    QVERIFY(detached.text().startsWith("Kernel starting"));
    detached.show_state(KernelState::paused);
    QCOMPARE(detached.text(), QStringLiteral("Kernel paused"));
    detached.show_state(KernelState::failed, "no module named encodings");
    QCOMPARE(detached.text(), QStringLiteral("Kernel failed to start"));
    QCOMPARE(detached.toolTip(), QStringLiteral("no module named encodings"));
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  configure_application(app);
  ShellRunTest test;
  return run_qtest(test, argc, argv);
}

#include "test_shell_run.moc"
