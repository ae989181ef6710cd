#include "first_frame_probe.h"

#include <QEvent>
#include <QTimer>
#include <QWidget>
#include <QWindow>

#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace rt::studio {

double ms_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  // Field 2 (comm) may contain spaces; the fields after it start past the last ')'.
  const auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long start_ticks = 0;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) start_ticks = std::stoull(field);
  timespec now{};
  if (start_ticks == 0 || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (now.tv_sec + now.tv_nsec * 1e-9 - start_ticks / ticks_per_second) * 1e3;
}

double resident_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024.0;
    }
    status.ignore(1 << 12, '\n');
  }
  return -1;
}

FirstFrameProbe::FirstFrameProbe(QWidget* window) : QObject(window), window_(window) {
  window_->installEventFilter(this);
}

bool FirstFrameProbe::eventFilter(QObject* watched, QEvent* event) {
  if (fired_) return false;
  // The QWindow exists once the widget is shown; watch it for the expose.
  if (watched == window_ && event->type() == QEvent::Show && !watching_window_handle_ && window_->windowHandle()) {
    window_->windowHandle()->installEventFilter(this);
    watching_window_handle_ = true;
  }
  if (watched == window_->windowHandle() && event->type() == QEvent::Expose && window_->windowHandle()->isExposed()) {
    fired_ = true;
    // Queued: runs once the expose (and the synchronous paint it triggers) has been handled.
    QTimer::singleShot(0, this, [this] { emit firstFrame(ms_since_process_start()); });
  }
  return false;
}

}  // namespace rt::studio
