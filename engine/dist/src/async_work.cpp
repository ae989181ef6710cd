#include "async_work.h"

#include <fmt/core.h>

#include <algorithm>

#include "rt/thread_name.h"

namespace rt::dist::detail {

AsyncWork::AsyncWork(std::string description, Milliseconds default_timeout, std::vector<Tensor> outputs)
    : default_timeout_(default_timeout) {
  description_ = std::move(description);
  outputs_ = std::move(outputs);
}

bool AsyncWork::is_completed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

void AsyncWork::wait(Milliseconds timeout) {
  if (timeout.count() <= 0) timeout = default_timeout_;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_cv_.wait_for(lock, timeout, [&] { return done_; }))
    throw DistBackendError(fmt::format(
        "{} did not finish within {} ms. Hint: a rank of the group has not called it (yet), called another "
        "collective, or is stuck; RT_DISTRIBUTED_DEBUG=DETAIL checks that every rank calls the same collectives",
        description_, timeout.count()));
  if (error_) std::rethrow_exception(error_);
}

std::exception_ptr AsyncWork::exception() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void AsyncWork::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    error_ = std::move(error);
  }
  done_cv_.notify_all();
}

WorkerThreads::WorkerThreads(std::string name, int threads) : name_(std::move(name)) {
  for (int i = 0; i < std::max(threads, 1); ++i)
    threads_.emplace_back([this, i] {
      rt::set_this_thread_name(fmt::format("{} {}", name_, i));
      loop();
    });
}

WorkerThreads::~WorkerThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerThreads::enqueue(std::shared_ptr<AsyncWork> work, std::function<void()> run) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(std::move(work), std::move(run));
  }
  cv_.notify_one();
}

void WorkerThreads::loop() {
  for (;;) {
    std::pair<std::shared_ptr<AsyncWork>, std::function<void()>> item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    try {
      item.second();
    } catch (...) {
      error = std::current_exception();
    }
    item.first->finish(error);
  }
}

}  // namespace rt::dist::detail
