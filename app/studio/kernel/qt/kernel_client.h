// app/studio/kernel/qt/kernel_client.h — the GUI's handle on the Python kernel (lib rt_kernel_qt): owns the
// process's PythonKernel and re-emits its events as Qt signals delivered on the thread that owns the
// client (the GUI thread), in kernel order. The GUI thread never takes the GIL.
//
//   auto* kernel = new rt::studio::KernelClient({}, mainWindow);
//   connect(kernel, &KernelClient::streamOutput, cell, [cell](quint64 id, rt::studio::Stream s, const QString& t) {
//     cell->appendStream(rt::studio::nbformat_name(s), t); });
//   connect(kernel, &KernelClient::finished, this, [](const rt::studio::ExecutionSummary& s) { ... });
//   connect(kernel, &KernelClient::stateChanged, statusBar, [](rt::studio::KernelState st) { ... });
//   quint64 id = kernel->execute(cellSource, "3");
//   kernel->requestVariables();          // -> variablesReady(snapshot) a few ms later, also mid-cell
//
// Contracts:
// - Signals for one request come in the order of Note [Kernel output order] (python_kernel.h):
//   started, then streamOutput/displayData/executeResult/executeError as they happened, finished last.
// - Signals go out in batches at most every 16 ms (60 Hz); within a batch, consecutive stream chunks of
//   the same request and stream are merged into one streamOutput, so an output flood costs the GUI about
//   one signal per frame, however many writes the cell makes. Nothing is dropped (size caps belong to the
//   notebook model). A batch waits at most 16 ms, except one holding a cell's `finished`, which goes out on
//   the next event-loop turn: Run All submits each cell after the previous one finished, so throttling
//   finishes would cost every trivial cell a frame (see Note [Output throttling]).
//
// Note [Output throttling]
// The throttle protects the GUI from floods (a cell printing 200k lines gets ~60 batches a second), and a
// flood has one `finished` at its end, so draining early for it adds at most one batch per cell. Measured with
// bench/studio/studio_gui_bench (Run All of 100 trivial cells): ~20 ms per cell when finishes waited for the
// throttle, a few ms once they did not.
// - Requests sent from a kernel thread after the client is destroyed are dropped: destruction stops the
//   kernel (PythonKernel's destructor) first.
// - Like PythonKernel, only one KernelClient (or PythonKernel) per process.
#pragma once

#include <QObject>
#include <QTimer>
#include <QString>

#include <chrono>

#include <memory>

#include "../python_kernel.h"

namespace rt::studio {

class KernelClient : public QObject {
  Q_OBJECT

 public:
  explicit KernelClient(KernelOptions options = {}, QObject* parent = nullptr);
  ~KernelClient() override;

  quint64 execute(const QString& code, const QString& cellLabel = {});
  void interrupt();
  void restart();
  void setWorkingDirectory(const QString& dir);
  void requestVariables();                     // -> variablesReady
  void requestTensorStats(const QString& name);  // -> tensorStatsReady

  KernelState state() const;
  QString startupError() const;
  // The wrapped kernel, for code that needs the plain C++ API (its listener callbacks run on kernel threads).
  PythonKernel& kernel();

 signals:
  void started(quint64 id, int executionCount);
  void streamOutput(quint64 id, rt::studio::Stream stream, const QString& text);
  void displayData(quint64 id, const rt::studio::DisplayData& data);
  void executeResult(quint64 id, int executionCount, const rt::studio::DisplayData& data);
  void executeError(quint64 id, const rt::studio::ExecutionError& error);
  void finished(const rt::studio::ExecutionSummary& summary);
  void stateChanged(rt::studio::KernelState state);
  void variablesReady(const rt::studio::VariablesSnapshot& snapshot);
  void tensorStatsReady(const rt::studio::TensorStats& stats);

 private:
  struct Relay;
  std::unique_ptr<Relay> relay_;  // listener on kernel threads; posts into this object's thread
  std::unique_ptr<PythonKernel> kernel_;
  QTimer* throttle_ = nullptr;    // spaces drains kMinDrainInterval apart
  std::chrono::steady_clock::time_point last_drain_{};
  void drain();  // GUI thread: emits everything the relay queued (or schedules that, see throttle_)
};

}  // namespace rt::studio

Q_DECLARE_METATYPE(rt::studio::KernelState)
Q_DECLARE_METATYPE(rt::studio::Stream)
Q_DECLARE_METATYPE(rt::studio::DisplayData)
Q_DECLARE_METATYPE(rt::studio::ExecutionError)
Q_DECLARE_METATYPE(rt::studio::ExecutionSummary)
Q_DECLARE_METATYPE(rt::studio::VariablesSnapshot)
Q_DECLARE_METATYPE(rt::studio::TensorStats)
