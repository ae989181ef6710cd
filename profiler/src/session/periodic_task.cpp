#include "session/periodic_task.h"

namespace rt::prof::session {

PeriodicTask::PeriodicTask(std::chrono::milliseconds interval, std::function<void()> task)
    : interval_(interval), task_(std::move(task)) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lk(mu_);
    while (!wake_.wait_for(lk, interval_, [this] { return stopping_; })) {
      lk.unlock();
      task_();
      lk.lock();
    }
  });
}

PeriodicTask::~PeriodicTask() { stop(); }

void PeriodicTask::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace rt::prof::session
