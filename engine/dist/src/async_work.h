// AsyncWork and WorkerThread: a Work completed by a worker thread that runs a group's operations one at a
// time, in the order they were enqueued (the gloo backend; any backend whose library calls block).
//
//   WorkerThread worker("gloo group 'default'");
//   auto work = std::make_shared<AsyncWork>(c.what, group_timeout, {tensor});
//   worker.enqueue(work, [=] { gloo::allreduce(opts); });   // runs on the worker; throws -> work fails
//   work->wait();                                            // rethrows what the closure threw
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

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

class WorkerThread {
 public:
  explicit WorkerThread(std::string name);
  ~WorkerThread();  // runs what is queued, then joins
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  void enqueue(std::shared_ptr<AsyncWork> work, std::function<void()> run);

 private:
  void loop();
  std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::shared_ptr<AsyncWork>, std::function<void()>>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rt::dist::detail
