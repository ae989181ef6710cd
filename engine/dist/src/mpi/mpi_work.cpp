#include "mpi/mpi_work.h"

#include "ledger/ledger_internal.h"

#include <fmt/core.h>

#include <chrono>
#include <thread>

namespace rt::dist::mpi {

Communicator::~Communicator() {
  if (comm == MPI_COMM_NULL) return;
  auto guard = Runtime::get().lock();
  MPI_Comm_free(&comm);
}

MpiWork::MpiWork(std::string description, std::vector<Tensor> outputs, std::shared_ptr<Communicator> comm,
                 Milliseconds group_timeout)
    : comm_(std::move(comm)), group_timeout_(group_timeout) {
  description_ = std::move(description);
  outputs_ = std::move(outputs);
}

void MpiWork::finish() {
  finished_ = true;
  detail::ledger_finish(ledger_id);
  inputs.clear();
  staging = {};
  for (auto& c : counts) c = {};
  on_success = nullptr;
  comm_.reset();
}

bool MpiWork::is_completed() {
  std::lock_guard<std::mutex> g(mutex_);
  if (finished_) return true;
  int done = 0;
  int rc;
  {
    auto mpi_guard = Runtime::get().lock();
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS) {
    error_ = std::make_exception_ptr(
        DistBackendError(fmt::format("{} failed in MPI: {}", description_, Runtime::error_string(rc))));
    finish();
    return true;
  }
  if (!done) return false;
  try {
    if (on_success) on_success();
  } catch (...) {
    error_ = std::current_exception();
  }
  finish();
  return true;
}

void MpiWork::wait(Milliseconds timeout) {
  if (timeout.count() < 0)
    throw ValueError(fmt::format("{}: wait(timeout) needs a positive timeout, or 0 for the group's ({} ms); got {} ms",
                                 description_, group_timeout_.count(), timeout.count()));
  if (timeout.count() == 0) timeout = group_timeout_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // MPI progresses inside MPI_Test: poll eagerly at first, then back off to at most 1 ms between tests.
  auto pause = std::chrono::microseconds(0);
  int polls = 0;
  while (!is_completed()) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw DistBackendError(fmt::format(
          "{}: timed out after {} ms waiting for it to finish (it stays in flight: MPI cannot cancel it). Hint: a "
          "peer has not reached the matching call, called it with other sizes, or has died; raise the timeout "
          "(ProcessGroupOptions::timeout, or wait(timeout)) if the peers are only slow",
          description_, timeout.count()));
    if (++polls < 1000) {
      std::this_thread::yield();
    } else {
      pause = std::min(std::chrono::microseconds(1000), pause + std::chrono::microseconds(20));
      std::this_thread::sleep_for(pause);
    }
  }
  std::lock_guard<std::mutex> g(mutex_);
  if (error_) std::rethrow_exception(error_);
}

std::exception_ptr MpiWork::exception() {
  std::lock_guard<std::mutex> g(mutex_);
  return error_;
}

}  // namespace rt::dist::mpi
