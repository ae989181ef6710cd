// NotebookView running cells on a real KernelClient (QtTest, offscreen). One kernel per process (CPython starts
// once), shared by every test function. Outputs and execution counts are checked in the DOCUMENT as well as on
// screen.
#include "notebook_view_fixture.h"

#include "kernel/qt/kernel_client.h"
#include "notebook_view/notebook_execution.h"
#include "notebook_view/output_area.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

using namespace rt::studio;
using namespace rt::studio::testing;

namespace {

bool waitUntil(const std::function<bool()>& done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > ms) return false;
    QTest::qWait(10);
  }
  return true;
}

std::string streamText(const Cell& cell, const char* name) {
  std::string text;
  for (const auto& out : cell.outputs) {
    if (out.value("output_type", "") == "stream" && out.value("name", "") == name) text += out.value("text", "");
  }
  return text;
}

const nlohmann::json* outputOfType(const Cell& cell, const char* type) {
  for (const auto& out : cell.outputs) {
    if (out.value("output_type", "") == type) return &out;
  }
  return nullptr;
}

}  // namespace

class NotebookViewKernelTest : public QObject {
  Q_OBJECT

  KernelClient* kernel_ = nullptr;

  // A view of `cells` connected to the kernel.
  std::unique_ptr<ShownNotebook> open(const std::vector<CellSpec>& cells) {
    auto s = std::make_unique<ShownNotebook>(makeNotebook(cells));
    s->view->set_kernel(kernel_);
    return s;
  }
  bool waitIdle(ShownNotebook& s, int ms = 60000) {
    return waitUntil([&] { return !s.view->is_busy() && kernel_->state() == KernelState::idle; }, ms);
  }
  bool waitRunning(ShownNotebook& s, int cell, int ms = 60000) {
    return waitUntil([&] {
      return s.view->execution().state_of_cell(s.doc->cell(static_cast<std::size_t>(cell)).id) ==
             ExecutionQueue::State::Running;
    }, ms);
  }

 private slots:
  void initTestCase() {
    KernelOptions options;
    options.capture_fd_output = false;  // QtTest's own log lines must not land in a cell
    options.echo_output = false;
    kernel_ = new KernelClient(options, this);
    QVERIFY(waitUntil([&] { return kernel_->state() == KernelState::idle; }, 60000));
  }

  void runningACellFillsTheModel() {
    auto s = open({{CellType::code, "x = 6 * 7\nprint('hello')\nx"}, {CellType::code, "x + 1"}});
    QSignalSpy aboutToRun(s->view.get(), &NotebookView::aboutToRun);
    QSignalSpy busy(s->view.get(), &NotebookView::kernelBusyChanged);
    s->key(Qt::Key_Return, Qt::ControlModifier);  // run in place
    QCOMPARE(aboutToRun.count(), 1);
    QVERIFY(s->view->is_busy());
    QCOMPARE(s->cell(0)->prompt_text(), QStringLiteral("[*]:"));
    QVERIFY(waitIdle(*s));
    const Cell& cell = s->doc->cell(0);
    QCOMPARE(streamText(cell, "stdout"), std::string("hello\n"));
    const nlohmann::json* result = outputOfType(cell, "execute_result");
    QVERIFY(result);
    QCOMPARE((*result)["data"]["text/plain"].get<std::string>(), std::string("42"));
    QVERIFY(cell.execution_count.has_value());
    const auto count = *cell.execution_count;
    QCOMPARE((*result)["execution_count"].get<std::int64_t>(), count);
    QVERIFY(s->doc->is_dirty());
    // On screen too.
    s->view->flushOutputs();
    QCOMPARE(s->cell(0)->prompt_text(), QStringLiteral("[%1]:").arg(count));
    QVERIFY(s->cell(0)->output_area()->visible_text().contains(QStringLiteral("hello")));
    QVERIFY(s->cell(0)->output_area()->visible_text().contains(QStringLiteral("42")));
    QVERIFY(!s->cell(0)->run_time_text().isEmpty());
    QCOMPARE(busy.count(), 2);  // busy, then idle
    QCOMPARE(s->view->active_index(), 0);
    // Shift+Enter runs and moves on; the second cell sees the first one's variable.
    s->key(Qt::Key_Return, Qt::ShiftModifier);
    QCOMPARE(s->view->active_index(), 1);
    s->key(Qt::Key_Return, Qt::ShiftModifier);  // the last cell: runs and appends a new one
    QCOMPARE(s->view->cell_count(), 3);
    QVERIFY(waitIdle(*s));
    const nlohmann::json* second = outputOfType(s->doc->cell(1), "execute_result");
    QVERIFY(second);
    QCOMPARE((*second)["data"]["text/plain"].get<std::string>(), std::string("43"));
    QCOMPARE(*s->doc->cell(1).execution_count, *s->doc->cell(0).execution_count + 1);
  }

  void streamsArriveLiveAndCarriageReturnsOverwrite() {
    auto s = open({{CellType::code,
                    "import sys, time\n"
                    "print('start', flush=True)\n"
                    "for i in range(5):\n"
                    "    print(f'\\r{(i + 1) * 20}%', end='', flush=True)\n"
                    "    time.sleep(0.05)\n"
                    "print()\n"
                    "print('oops', file=sys.stderr)\n"
                    "time.sleep(1.0)\n"}});
    s->view->runSelectedInPlace();
    // Output shows while the cell still runs.
    QVERIFY(waitUntil([&] {
      return s->view->is_busy() && s->cell(0)->output_area()->visible_text().contains(QStringLiteral("100%"));
    }, 30000));
    QVERIFY(waitIdle(*s));
    const Cell& cell = s->doc->cell(0);
    QCOMPARE(streamText(cell, "stdout"), std::string("start\n100%\n"));
    QCOMPARE(streamText(cell, "stderr"), std::string("oops\n"));
  }

  void errorShowsTracebackAndStopsRunAll() {
    auto s = open({{CellType::code, "def f():\n    return 1 / 0\n\nf()"}, {CellType::code, "never = 1"}});
    QSignalSpy finished(s->view.get(), &NotebookView::cellFinished);
    s->view->runAll();
    QVERIFY(waitIdle(*s));
    const nlohmann::json* error = outputOfType(s->doc->cell(0), "error");
    QVERIFY(error);
    QCOMPARE((*error)["ename"].get<std::string>(), std::string("ZeroDivisionError"));
    const std::string label = "<cell " + std::to_string(*s->doc->cell(0).execution_count) + ">";
    QVERIFY2((*error)["traceback"].dump().find(label) != std::string::npos, (*error)["traceback"].dump().c_str());
    s->view->flushOutputs();
    const QString text = s->cell(0)->output_area()->visible_text();
    QVERIFY2(text.contains(QStringLiteral("return 1 / 0")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("ZeroDivisionError")));
    QCOMPARE(s->cell(0)->editor()->error_line(), 2);  // the failing line is marked in the editor
    QVERIFY(s->cell(0)->run_time_text().contains(QStringLiteral("failed")));
    // The error stopped "run all": the second cell never ran.
    QVERIFY(!s->doc->cell(1).execution_count.has_value());
    QVERIFY(s->doc->cell(1).outputs.empty());
    QCOMPARE(finished.count(), 1);
    QCOMPARE(s->cell(1)->prompt_text(), QStringLiteral("[ ]:"));
  }

  void interruptStopsABusyLoopAndDropsQueuedCells() {
    auto s = open({{CellType::code, "n = 0\nwhile True:\n    n += 1"}, {CellType::code, "after = 1"}});
    s->view->runAll();
    QVERIFY(waitRunning(*s, 0));
    QCOMPARE(s->cell(1)->prompt_text(), QStringLiteral("[*]:"));  // waiting
    QTest::qWait(200);
    QElapsedTimer t;
    t.start();
    s->key(Qt::Key_I);
    s->key(Qt::Key_I);  // I, I
    QVERIFY(waitIdle(*s, 10000));
    qInfo("busy loop interrupted in %lld ms", static_cast<long long>(t.elapsed()));
    const nlohmann::json* error = outputOfType(s->doc->cell(0), "error");
    QVERIFY(error);
    QCOMPARE((*error)["ename"].get<std::string>(), std::string("KeyboardInterrupt"));
    QVERIFY(!s->doc->cell(1).execution_count.has_value());
    QCOMPARE(s->cell(1)->prompt_text(), QStringLiteral("[ ]:"));
  }

  void interruptStopsSleep() {
    auto s = open({{CellType::code, "import time\ntime.sleep(100)"}});
    s->view->runSelectedInPlace();
    QVERIFY(waitRunning(*s, 0));
    QTest::qWait(200);
    s->view->interrupt();
    QVERIFY(waitIdle(*s, 10000));
    const nlohmann::json* error = outputOfType(s->doc->cell(0), "error");
    QVERIFY(error);
    QCOMPARE((*error)["ename"].get<std::string>(), std::string("KeyboardInterrupt"));
  }

  void restartGivesAFreshNamespace() {
    auto s = open({{CellType::code, "secret = 5"}, {CellType::code, "'secret' in globals()"}});
    s->view->runAll();
    QVERIFY(waitIdle(*s));
    QCOMPARE((*outputOfType(s->doc->cell(1), "execute_result"))["data"]["text/plain"].get<std::string>(),
             std::string("True"));
    s->view->selectCell(0);
    s->key(Qt::Key_0);
    s->key(Qt::Key_0);  // 0, 0 (confirmation answered yes by the fixture)
    QVERIFY(waitIdle(*s));
    s->view->selectCell(1);
    s->view->runSelectedInPlace();
    QVERIFY(waitIdle(*s));
    QCOMPARE((*outputOfType(s->doc->cell(1), "execute_result"))["data"]["text/plain"].get<std::string>(),
             std::string("False"));
    QCOMPARE(*s->doc->cell(1).execution_count, std::int64_t{1});  // counts start again
  }

  void figuresShowAsImages() {
    auto s = open({{CellType::code, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('loss');"}});
    s->view->runSelectedInPlace();
    QVERIFY(waitIdle(*s, 120000));
    const nlohmann::json* display = outputOfType(s->doc->cell(0), "display_data");
    QVERIFY2(display, s->doc->cell(0).outputs.empty() ? "no outputs" : nlohmann::json(s->doc->cell(0).outputs).dump().substr(0, 2000).c_str());
    QVERIFY((*display)["data"].contains("image/png"));
    s->view->flushOutputs();
    QVERIFY(s->cell(0)->output_area()->visible_text().contains(QStringLiteral("[image ")));
  }

  void runAboveAndBelow() {
    auto s = open({{CellType::code, "a = 1"}, {CellType::code, "b = 2"}, {CellType::code, "c = 3"}});
    s->view->selectCell(1);
    s->view->runAbove();
    QVERIFY(waitIdle(*s));
    QVERIFY(s->doc->cell(0).execution_count.has_value());
    QVERIFY(!s->doc->cell(1).execution_count.has_value());
    s->view->runBelow();
    QVERIFY(waitIdle(*s));
    QVERIFY(s->doc->cell(1).execution_count.has_value());
    QVERIFY(s->doc->cell(2).execution_count.has_value());
    QCOMPARE(*s->doc->cell(2).execution_count, *s->doc->cell(1).execution_count + 1);
    s->view->selectCell(2);
    s->key(Qt::Key_Return, Qt::AltModifier);  // run and insert below, editing it
    QCOMPARE(s->view->cell_count(), 4);
    QCOMPARE(s->view->active_index(), 3);
    QCOMPARE(s->view->mode(), EditorMode::Edit);
    QVERIFY(waitIdle(*s));
  }

  void outputFloodIsCappedAndTheGuiKeepsRunning() {
    auto s = open({{CellType::code, "for i in range(200000):\n    print('line', i)"}});
    s->view->set_stream_limits({.max_text_bytes = 20000});
    QElapsedTimer sinceTick;
    qint64 longestGap = 0;
    QTimer ticker;
    QObject::connect(&ticker, &QTimer::timeout, [&] {
      longestGap = std::max(longestGap, sinceTick.restart());
    });
    sinceTick.start();
    ticker.start(10);
    QElapsedTimer t;
    t.start();
    s->view->runSelectedInPlace();
    QVERIFY(waitIdle(*s, 120000));
    qInfo("200000 printed lines in %lld ms; longest GUI event-loop gap %lld ms", static_cast<long long>(t.elapsed()),
          static_cast<long long>(longestGap));
    const std::string text = streamText(s->doc->cell(0), "stdout");
    QVERIFY(text.size() < 21000);
    QVERIFY2(text.find("output truncated") != std::string::npos, text.substr(text.size() - 200).c_str());
    QVERIFY(text.rfind("line 0\n", 0) == 0);
    s->view->flushOutputs();
    QVERIFY(s->cell(0)->output_area()->visible_text().contains(QStringLiteral("output truncated")));
  }

  void deletingARunningCellDropsItsOutputs() {
    auto s = open({{CellType::code, "import time\nfor i in range(20):\n    print(i, flush=True)\n    time.sleep(0.02)"},
                   {CellType::code, "keep = 1"}});
    s->view->runSelectedInPlace();
    QVERIFY(waitRunning(*s, 0));
    s->key(Qt::Key_D);
    s->key(Qt::Key_D);
    QCOMPARE(s->view->cell_count(), 1);
    QVERIFY(waitIdle(*s));
    QVERIFY(s->doc->cell(0).outputs.empty());
    QCOMPARE(s->doc->cell(0).source, std::string("keep = 1"));
  }

  void cleanupTestCase() {
    delete kernel_;
    kernel_ = nullptr;
  }
};

// QtTest's crash handler also catches SIGINT, which the kernel sends to its interpreter thread to interrupt a
// cell, and would end the test there: run without it (as the studio itself does).
int main(int argc, char** argv) {
  QApplication app(argc, argv);
  NotebookViewKernelTest test;
  std::vector<char*> args(argv, argv + argc);
  static char noCrashHandler[] = "-nocrashhandler";
  args.push_back(noCrashHandler);
  return QTest::qExec(&test, static_cast<int>(args.size()), args.data());
}
#include "test_notebook_view_kernel.moc"
