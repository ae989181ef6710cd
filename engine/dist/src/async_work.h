// AsyncWork and WorkerThreads: a Work completed by the worker threads that run a group's operations, taken
// in the order they were enqueued (the gloo backend; any backend whose library calls block). With two
// threads (gloo's default, as PyTorch's) a collective can start while the one before it still waits for a
// slow peer; the library keeps them apart by tag.
//
//   WorkerThreads worker("gloo group 'default'", 2);
//   auto work = std::make_shared<AsyncWork>(c.what, group_timeout, {tensor});
//   worker.enqueue(work, [=] { gloo::allreduce(opts); });   // runs on the worker; throws -> work fails
//   work->wait();                                            // rethrows what the closure threw
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "rt/dist/process_group.h"

namespace rt::dist::detail {

class AsyncWork : public Work {
 public:
  AsyncWork(std::string description, Milliseconds default_timeout, std::vector<Tensor> outputs);
  bool is_completed() override;
  void wait(Milliseconds timeout) override;
  std::exception_ptr exception() override;
  // Called once by whoever ran the operation.
  void finish(std::exception_ptr error);

 private:
  Milliseconds default_timeout_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class WorkerThreads {
 public:
  // Threads named "<name> 0", "<name> 1", ... (rt/thread_name.h), as the profiler shows them.
  WorkerThreads(std::string name, int threads);
  ~WorkerThreads();  // runs what is queued, then joins
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  void enqueue(std::shared_ptr<AsyncWork> work, std::function<void()> run);

 private:
  void loop();
  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::shared_ptr<AsyncWork>, std::function<void()>>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace rt::dist::detail
