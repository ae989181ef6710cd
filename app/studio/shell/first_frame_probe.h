// app/studio/shell/first_frame_probe.h — measures cold start: process start to the first painted window.
//
//   auto* probe = new FirstFrameProbe(&window);     // before window.show()
//   connect(probe, &FirstFrameProbe::firstFrame, [](double ms_since_process_start) { ... });
//
// firstFrame fires once, right after the window's first expose has been handled (Qt paints an exposed window
// synchronously while handling the expose, so the frame is in the backing store by then). Process start comes
// from /proc/self/stat (the kernel's start time of this process, 10 ms resolution), so dynamic loading and
// static initialisers count too.
#pragma once
#include <QObject>

class QWidget;

namespace rt::studio {

class FirstFrameProbe : public QObject {
  Q_OBJECT

 public:
  explicit FirstFrameProbe(QWidget* window);
  bool eventFilter(QObject* watched, QEvent* event) override;

 signals:
  void firstFrame(double ms_since_process_start);

 private:
  QWidget* window_;
  bool fired_ = false;
  bool watching_window_handle_ = false;
};

// Milliseconds since this process started (from /proc/self/stat and CLOCK_BOOTTIME); -1 when unknown.
double ms_since_process_start();
// Resident set size of this process in MiB (VmRSS of /proc/self/status); -1 when unknown.
double resident_mib();

}  // namespace rt::studio
