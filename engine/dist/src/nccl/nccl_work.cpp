// NcclWork and the watchdog (nccl_comm.h). See Note [NCCL work lifecycle] and Note [NCCL abort].
#include <fmt/core.h>

#include <algorithm>

#include "ledger/ledger_internal.h"
#include "nccl/nccl_comm.h"

namespace rt::dist::nccl {

NcclWork::NcclWork(std::string description, std::shared_ptr<Communicator> comm, Milliseconds timeout,
                   std::vector<Tensor> outputs, std::vector<Tensor> tensors)
    : comm_(std::move(comm)), device_(comm_->device()), tensors_(std::move(tensors)), timeout_(timeout),
      enqueued_(Clock::now()) {
  description_ = std::move(description);
  outputs_ = std::move(outputs);
}

void NcclWork::record_end() { end_.record(comm_->stream()); }

std::shared_ptr<Communicator> NcclWork::communicator() {
  std::lock_guard<std::mutex> lock(mutex_);
  return comm_;
}

void NcclWork::finish_locked() {
  detail::ledger_finish(ledger_id);
  tensors_.clear();
  comm_.reset();
}

void NcclWork::fail_locked(std::exception_ptr error) {
  state_ = State::Failed;
  error_ = std::move(error);
  finish_locked();
}

NcclWork::State NcclWork::poll() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != State::Running) return state_;
  if (comm_->aborted()) {
    fail_locked(std::make_exception_ptr(DistBackendError(
        fmt::format("{} failed: its NCCL communicator was aborted: {}", description_, comm_->abort_reason()))));
    return state_;
  }
  bool done = false;
  try {
    done = end_.query();
  } catch (const std::exception& e) {  // a CUDA error (an earlier kernel's fault surfaces here)
    fail_locked(std::make_exception_ptr(DistBackendError(fmt::format(
        "{} failed on cuda:{}: {}. Hint: run with CUDA_LAUNCH_BLOCKING=1 to find the kernel that failed",
        description_, device_, e.what()))));
    return state_;
  }
  if (done) {
    state_ = State::Succeeded;
    finish_locked();
  }
  return state_;
}

void NcclWork::time_out(Milliseconds timeout, const char* why) {
  std::shared_ptr<Communicator> comm;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ != State::Running) return;
    comm = comm_;
    message = fmt::format(
        "{} did not finish within {} ms ({}): the NCCL communicator of {} on cuda:{} was aborted, so the group "
        "cannot run collectives any more: destroy it and create a new one (or restart the job). Hint: a rank has "
        "not called the matching collective (same order, dtype and size), or has died; the launcher's summary "
        "names the rank that ended first",
        description_, timeout.count(), why, comm->group(), device_);
    fail_locked(std::make_exception_ptr(DistBackendError(message)));
  }
  comm->abort(message);  // outside the lock: it takes the communicator's locks
}

bool NcclWork::is_completed() { return poll() != State::Running; }

std::exception_ptr NcclWork::exception() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void NcclWork::wait(Milliseconds timeout) {
  const auto start = Clock::now();
  if (poll() == State::Running) rt::cuda::Stream::current(device_).wait_event(end_);
  const bool passed = timeout.count() > 0;
  const auto deadline = passed ? start + timeout : this->deadline();
  int round = 0;
  for (;;) {
    switch (poll()) {
      case State::Succeeded: return;
      case State::Failed: std::rethrow_exception(exception());
      case State::Running: break;
    }
    if (Clock::now() >= deadline) {
      time_out(passed ? timeout : timeout_, passed ? "the timeout passed to wait" : "the group's timeout");
      continue;  // failed now, or finished just before
    }
    back_off(round);
  }
}

// ---- Watchdog ---------------------------------------------------------------------------------

Watchdog& Watchdog::instance() {
  static Watchdog watchdog;
  return watchdog;
}

Watchdog::Watchdog() : thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Works still in flight at exit keep their communicators: destroying those now, while static objects
  // (and perhaps the CUDA runtime) are being torn down, could hang. The process's end frees them.
  new std::vector<std::shared_ptr<NcclWork>>(std::move(works_));
}

void Watchdog::add(std::shared_ptr<NcclWork> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    works_.push_back(std::move(work));
  }
  cv_.notify_one();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    cv_.wait(lock, [&] { return stopping_ || !works_.empty(); });
    if (stopping_) break;
    lock.unlock();
    scan();
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return stopping_; });
  }
}

void Watchdog::scan() {
  std::vector<std::shared_ptr<NcclWork>> works;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    works.swap(works_);
  }
  std::vector<std::shared_ptr<NcclWork>> running;
  std::vector<Communicator*> asked;
  for (auto& work : works) {
    if (work->poll() != NcclWork::State::Running) continue;
    if (Clock::now() >= work->deadline()) {
      work->time_out(work->group_timeout(), "the group's timeout");
      continue;
    }
    running.push_back(work);
    std::shared_ptr<Communicator> comm = work->communicator();
    if (!comm || std::find(asked.begin(), asked.end(), comm.get()) != asked.end()) continue;
    asked.push_back(comm.get());
    const std::string error = comm->async_error();
    if (!error.empty())
      comm->abort(fmt::format(
          "NCCL reported an error on the communicator of {} (cuda:{}): {}. Hint: a peer died or the network between "
          "them failed; the launcher's summary names the rank that ended first. NCCL_DEBUG=INFO makes NCCL say more",
          comm->group(), comm->device(), error));
  }
  works.clear();  // may run ~Communicator for groups already gone: outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  works_.insert(works_.end(), std::make_move_iterator(running.begin()), std::make_move_iterator(running.end()));
}

}  // namespace rt::dist::nccl
