// A thread that runs one task every interval until stopped: the session's flusher.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace rt::prof::session {

class PeriodicTask {
 public:
  // Starts the thread; `task` runs first after one interval. It must not throw.
  PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task);
  ~PeriodicTask();  // stop()
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Wakes the thread and joins it; a run in progress finishes first, no run starts after.
  void stop();

 private:
  std::chrono::milliseconds interval_;
  std::function<void()> task_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rt::prof::session
