// app/studio/shell/kernel_status_label.h — the status bar's kernel indicator: state and live cell run time.
//
//   auto* status = new KernelStatusLabel(statusBar());
//   status->bind(kernelClient);            // follows stateChanged / started / finished
//   status->text();                        // "Kernel busy · cell [3] 2.4 s · 2 queued" (updated every 100 ms)
//
// Texts: "Kernel starting…", "Kernel idle" (then " · last cell 1.2 s" once a cell ran), "Kernel busy · cell
// [N] T" while a cell runs (T counts up live, formatted like the cells' own run times), "Kernel paused", and
// "Kernel failed to start" with the reason as tooltip. The state is also in property "kernelState" (the
// to_string name) for style sheets and tests. The elapsed time is measured from the kernel's `started`
// signal, so time spent queued does not count.
#pragma once
#include <QElapsedTimer>
#include <QLabel>
#include <QTimer>

#include "kernel/python_kernel.h"

namespace rt::studio {

class KernelClient;

class KernelStatusLabel : public QLabel {
  Q_OBJECT

 public:
  explicit KernelStatusLabel(QWidget* parent = nullptr);
  void bind(KernelClient* kernel);

  // The inputs bind() connects, public so the label can be driven without a kernel.
  void show_state(KernelState state, const QString& detail = {});
  void cell_started(int execution_count);
  void cell_finished(double seconds);
  void set_queued(std::size_t queued);

 private:
  void refresh();

  KernelState state_ = KernelState::starting;
  QString detail_;
  int running_count_ = 0;
  bool cell_running_ = false;
  std::size_t queued_ = 0;
  double last_seconds_ = -1;
  QElapsedTimer since_start_;
  QTimer tick_;
};

}  // namespace rt::studio
