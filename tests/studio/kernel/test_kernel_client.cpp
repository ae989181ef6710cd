// KernelClient (QtTest, no GUI): every kernel event arrives as a signal on the client's thread, in order,
// stream floods merged into few signals, variables while a cell runs. One client per process.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include "qt/kernel_client.h"

using namespace rt::studio;

class KernelClientTest : public QObject {
  Q_OBJECT

 private:
  KernelClient* client = nullptr;
  QStringList events;  // "started 3", "stdout ...", ... for the request being watched
  quint64 watched = 0;
  bool off_thread = false;
  int stream_signals = 0;  // streamOutput signals for the watched request

  void record(quint64 id, const QString& what) {
    if (QThread::currentThread() != qApp->thread()) off_thread = true;
    if (id != watched) return;
    if (what.startsWith("stdout ") && !events.isEmpty() && events.last().startsWith("stdout ")) {
      events.last() += what.mid(7);  // how many signals a text takes depends on timing; the text does not
      ++stream_signals;
      return;
    }
    if (what.startsWith("stdout ")) ++stream_signals;
    events << what;
  }

  // Runs `code` and pumps the event loop until its finished signal.
  ExecutionSummary run(const QString& code) {
    QSignalSpy finished(client, &KernelClient::finished);
    events.clear();
    stream_signals = 0;
    watched = client->execute(code);
    for (int i = 0; i < 600; ++i) {
      for (const auto& args : finished)
        if (args.at(0).value<ExecutionSummary>().id == watched) return args.at(0).value<ExecutionSummary>();
      finished.wait(100);
    }
    return {};
  }

 private slots:
  void initTestCase() {
    KernelOptions options;
    options.python_paths = {RT_TEST_PYTHON_DIR};
    options.echo_output = true;  // the test runner's own output goes through fd 1/2 too
    client = new KernelClient(options, this);
    connect(client, &KernelClient::started, this, [this](quint64 id, int n) { record(id, QString("started %1").arg(n)); });
    connect(client, &KernelClient::streamOutput, this, [this](quint64 id, Stream s, const QString& text) {
      record(id, QString("%1 %2").arg(nbformat_name(s), text));
    });
    connect(client, &KernelClient::displayData, this, [this](quint64 id, const DisplayData& d) {
      record(id, "display " + QString::fromStdString(d.data.at("text/plain")));
    });
    connect(client, &KernelClient::executeResult, this, [this](quint64 id, int n, const DisplayData& d) {
      record(id, QString("result %1 %2").arg(n).arg(QString::fromStdString(d.data.at("text/plain"))));
    });
    connect(client, &KernelClient::executeError, this, [this](quint64 id, const ExecutionError& e) {
      record(id, "error " + QString::fromStdString(e.ename));
    });
    connect(client, &KernelClient::finished, this, [this](const ExecutionSummary& s) {
      record(s.id, QString("finished %1").arg(to_string(s.status)));
    });
  }

  void signalsComeInKernelOrderOnTheClientThread() {
    const ExecutionSummary s = run("print('hi')\ndisplay('shown')\n6 * 7");
    QCOMPARE(s.status, ExecutionStatus::ok);
    QCOMPARE(events, QStringList({"started 1", "stdout hi\n", "display 'shown'", "result 1 42", "finished ok"}));
    QVERIFY(!off_thread);
  }

  void errorsArriveAsSignals() {
    const ExecutionSummary s = run("1 / 0");
    QCOMPARE(s.status, ExecutionStatus::error);
    QCOMPARE(events, QStringList({"started 2", "error ZeroDivisionError", "finished error"}));
  }

  void outputFloodIsMergedNotDropped() {
    const ExecutionSummary s = run("for i in range(20000):\n    print(i)");
    QCOMPARE(s.status, ExecutionStatus::ok);
    QCOMPARE(events.size(), 3);
    QVERIFY(events[1].startsWith("stdout "));
    const QString text = events[1].mid(7);
    const int signals_seen = stream_signals;
    QString expected;
    for (int i = 0; i < 20000; ++i) expected += QString::number(i) + "\n";
    QCOMPARE(text, expected);
    qInfo("20000 prints arrived as %d streamOutput signals", signals_seen);
    QVERIFY(signals_seen < 2000);  // 40000 writes, batched at 60 Hz
  }

  void stateChangesAndVariablesWhileRunning() {
    // `finished` arrives before the kernel has gone idle; a cell sent in between keeps it busy without a change.
    QTRY_COMPARE_WITH_TIMEOUT(client->state(), KernelState::idle, 10000);
    QSignalSpy states(client, &KernelClient::stateChanged);
    QSignalSpy variables(client, &KernelClient::variablesReady);
    QSignalSpy output(client, &KernelClient::streamOutput);
    events.clear();
    watched = client->execute("import time\nx = 0\nprint('ready')\nwhile True:\n    x += 1\n    time.sleep(0.001)\n");
    QTRY_VERIFY_WITH_TIMEOUT(events.contains("stdout ready\n"), 30000);
    QCOMPARE(client->state(), KernelState::busy);
    client->requestVariables();
    QTRY_COMPARE_WITH_TIMEOUT(variables.count(), 1, 10000);
    const auto snapshot = variables.at(0).at(0).value<VariablesSnapshot>();
    QVERIFY(snapshot.cell_running);
    bool found = false;
    for (const auto& v : snapshot.variables) found = found || v.name == "x";
    QVERIFY(found);
    QSignalSpy finished(client, &KernelClient::finished);
    client->interrupt();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
    QCOMPARE(finished.at(0).at(0).value<ExecutionSummary>().status, ExecutionStatus::error);
    QTRY_VERIFY_WITH_TIMEOUT(!states.isEmpty() && states.last().at(0).value<KernelState>() == KernelState::idle, 10000);
    bool saw_busy = false;
    for (const auto& args : states) saw_busy = saw_busy || args.at(0).value<KernelState>() == KernelState::busy;
    QVERIFY(saw_busy);
  }

  void tensorStatsAndRestart() {
    QCOMPARE(run("import rustytorch as rt\nw = rt.tensor([1.0, 3.0])").status, ExecutionStatus::ok);
    QSignalSpy stats(client, &KernelClient::tensorStatsReady);
    client->requestTensorStats("w");
    QTRY_COMPARE_WITH_TIMEOUT(stats.count(), 1, 10000);
    const auto st = stats.at(0).at(0).value<TensorStats>();
    QCOMPARE(st.name, std::string("w"));
    QCOMPARE(st.mean, 2.0);
    QSignalSpy states(client, &KernelClient::stateChanged);
    client->restart();
    const ExecutionSummary s = run("'w' in globals()");
    QCOMPARE(s.execution_count, 1);
    QCOMPARE(events, QStringList({"started 1", "result 1 False", "finished ok"}));
    bool saw_starting = false;
    for (const auto& args : states) saw_starting = saw_starting || args.at(0).value<KernelState>() == KernelState::starting;
    QVERIFY(saw_starting);
  }
};

QTEST_GUILESS_MAIN(KernelClientTest)
#include "test_kernel_client.moc"
