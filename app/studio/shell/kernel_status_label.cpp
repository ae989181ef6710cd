#include "kernel_status_label.h"

#include "kernel/qt/kernel_client.h"
#include "notebook_view/execution_queue.h"

namespace rt::studio {

namespace {

// The cells' own run-time style (notebook_view/execution_queue.h): "12 ms", "1.2 s", "2 min 5 s".
QString format_seconds(double seconds) {
  return QString::fromStdString(format_run_time(std::chrono::duration<double>(seconds)));
}

}  // namespace

KernelStatusLabel::KernelStatusLabel(QWidget* parent) : QLabel(parent) {
  setObjectName(QStringLiteral("kernelStatus"));
  setMinimumWidth(fontMetrics().horizontalAdvance(QStringLiteral("Kernel busy · cell [000] 00 min 00 s · 00 queued")));
  tick_.setInterval(100);
  connect(&tick_, &QTimer::timeout, this, &KernelStatusLabel::refresh);
  refresh();
}

void KernelStatusLabel::bind(KernelClient* kernel) {
  connect(kernel, &KernelClient::stateChanged, this, [this, kernel](KernelState state) {
    show_state(state, state == KernelState::failed ? kernel->startupError() : QString());
    set_queued(kernel->kernel().queued_count());
  });
  connect(kernel, &KernelClient::started, this, [this, kernel](quint64, int count) {
    cell_started(count);
    set_queued(kernel->kernel().queued_count());
  });
  connect(kernel, &KernelClient::finished, this, [this, kernel](const ExecutionSummary& summary) {
    if (summary.execution_count > 0) cell_finished(summary.seconds);
    set_queued(kernel->kernel().queued_count());
  });
  show_state(kernel->state(), kernel->state() == KernelState::failed ? kernel->startupError() : QString());
}

void KernelStatusLabel::show_state(KernelState state, const QString& detail) {
  state_ = state;
  detail_ = detail;
  if (state != KernelState::busy && state != KernelState::paused) cell_running_ = false;
  refresh();
}

void KernelStatusLabel::cell_started(int execution_count) {
  running_count_ = execution_count;
  cell_running_ = true;
  since_start_.start();
  tick_.start();
  refresh();
}

void KernelStatusLabel::cell_finished(double seconds) {
  cell_running_ = false;
  last_seconds_ = seconds;
  refresh();
}

void KernelStatusLabel::set_queued(std::size_t queued) {
  if (queued_ == queued) return;
  queued_ = queued;
  refresh();
}

void KernelStatusLabel::refresh() {
  QString text;
  switch (state_) {
    case KernelState::starting: text = tr("Kernel starting…"); break;
    case KernelState::idle:
      text = tr("Kernel idle");
      if (last_seconds_ >= 0) text += tr(" · last cell %1").arg(format_seconds(last_seconds_));
      break;
    case KernelState::busy: text = tr("Kernel busy"); break;
    case KernelState::paused: text = tr("Kernel paused"); break;
    case KernelState::failed: text = tr("Kernel failed to start"); break;
  }
  if (cell_running_ && (state_ == KernelState::busy || state_ == KernelState::paused))
    text += tr(" · cell [%1] %2").arg(running_count_).arg(format_seconds(since_start_.elapsed() / 1000.0));
  if (queued_ > 0 && state_ != KernelState::failed) text += tr(" · %1 queued").arg(queued_);
  if (!cell_running_) tick_.stop();
  setText(text);
  setToolTip(state_ == KernelState::failed ? detail_ : QString());
  setProperty("kernelState", QString::fromLatin1(to_string(state_)));
}

}  // namespace rt::studio
