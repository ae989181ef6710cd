// nccl/nccl_comm.h — the nccl backend's pieces below the group: rt's dtypes and reduce ops as NCCL sees
// them, one non-blocking NCCL communicator with its stream, the Work of one enqueued operation, and the
// process's watchdog. Internal to the nccl backend (process_group_nccl.cpp).
//
// Note [NCCL work lifecycle]
// A collective runs on its communicator's stream (a high-priority stream of the engine's pool,
// rt::cuda::Stream::create), which first waits for the caller's current stream, so the inputs are
// ready. After the NCCL call an end event is recorded there; the Work completes when that event has.
// Tensors: the Work holds every tensor the call reads or writes, and the watchdog holds the Work until
// the end event has completed (or the Work failed), so a caller who drops the Work early cannot free
// them; record_stream(tensor, stream) also tells the caching allocator that the NCCL stream uses their
// memory, so after an abort (when the Work lets the tensors go while a kernel may still be queued) the
// memory is reused only after that stream's work. Work::wait makes the caller's current stream wait on
// the end event (PyTorch's semantics) and then blocks the host until the event completed, as
// process_group.h's contract says; the wait's timeout is enforced that way.
//
// Note [NCCL abort]
// A Work past its timeout (the group's, checked by the watchdog thread; or the one passed to wait) aborts
// its communicator: the communicator is first marked aborted with the reason, every Work in flight on it
// fails with DistBackendError (the timed-out one with the timeout message, the others naming it), and
// only then is ncclCommAbort called, on a thread of its own: it may block while NCCL tears down (until
// the kernels queued on the communicator's stream have quit), and neither the caller's wait() nor the
// watchdog should wait for that. Later calls on the group check the mark before they touch NCCL and
// fail at once with the reason. ncclCommAbort and every enqueue take the communicator's enqueue mutex:
// NCCL calls on one communicator must not overlap.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/cuda.h"
#include "rt/dist/process_group.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "the nccl backend needs NCCL 2.14 or newer (non-blocking communicators, ncclCommFinalize, ncclAvg)"
#endif

namespace rt::dist::nccl {

using Clock = std::chrono::steady_clock;

// The NCCL type that reduces `dtype` (bool: ncclUint8).
ncclDataType_t datatype_of(ScalarType dtype);
// The NCCL op that reduces `dtype` by `op`. Bool follows PyTorch: Sum and Max are logical or (ncclMax),
// Product and Min logical and (ncclMin). Avg is ncclAvg (floating dtypes only; checked before).
ncclRedOp_t op_of(ScalarType dtype, ReduceOp op);
// "NCCL 2.28.9"
std::string version_string();
// The message of a failed NCCL call: ncclGetErrorString, plus ncclGetLastError when it says more.
std::string describe(ncclResult_t result, ncclComm_t comm);

// One step of a polling loop: yields for the first rounds (a small collective finishes in microseconds),
// then sleeps 50 us, then 1 ms. `round` starts at 0.
void back_off(int& round);

// For its scope, `device` is the calling thread's current CUDA device. Unlike the engine's guard
// (engine/src/cuda/device_state.h), it never throws: the watchdog and the detached abort threads use it,
// where an exception would end the process.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

// One group's NCCL communicator on one device, created non-blocking (config.blocking = 0) so that the
// watchdog can abort it while an operation or the creation itself is in progress. See Note [NCCL abort].
class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  // Joins rank `rank` of `size` to the communicator of `id` on `device`, waiting at most `timeout` for
  // the other ranks (then aborts and throws DistBackendError naming `group`). `group` is what messages
  // call it: "group 'default' (nccl, 2 ranks)".
  Communicator(const ncclUniqueId& id, int rank, int size, int device, Milliseconds timeout, std::string group);
  // Flushes what is in flight (ncclCommFinalize, at most the timeout) and destroys the communicator;
  // after an abort, nothing (ncclCommAbort freed it).
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t comm() const { return comm_; }
  int device() const { return device_; }
  const rt::cuda::Stream& stream() const { return stream_; }
  const std::string& group() const { return group_; }
  std::mutex& enqueue_mutex() { return enqueue_mutex_; }

  // After an enqueue that NCCL answered with ncclInProgress: polls ncclCommGetAsyncError until it is
  // not, at most until `deadline`. Returns the final result (ncclInProgress when the deadline passed).
  // Called with the enqueue mutex held.
  ncclResult_t wait_ready(Clock::time_point deadline);
  // The communicator's asynchronous error ("" when none): a peer died, a network error. Never blocks.
  std::string async_error();

  // Marks the communicator aborted with `reason` and starts ncclCommAbort on a thread of its own, once;
  // false when it was aborted already. Thread-safe; the object must be owned by a shared_ptr. See
  // Note [NCCL abort].
  bool abort(const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  std::string abort_reason() const;

 private:
  ncclComm_t comm_ = nullptr;
  int device_;
  rt::cuda::Stream stream_;
  std::string group_;
  Milliseconds timeout_;
  std::mutex enqueue_mutex_;
  mutable std::mutex reason_mutex_;
  std::string abort_reason_;
  std::atomic<bool> aborted_{false};
};

// The Work of one operation enqueued on a communicator's stream. See Note [NCCL work lifecycle].
class NcclWork final : public Work {
 public:
  // `timeout`: the group's; `tensors`: every tensor the operation reads or writes (held until done).
  NcclWork(std::string description, std::shared_ptr<Communicator> comm, Milliseconds timeout,
           std::vector<Tensor> outputs, std::vector<Tensor> tensors);

  bool is_completed() override;
  // Orders the current stream after the operation, then blocks until it finished or failed; a timeout
  // that passes first (0: the group's, counted from the enqueue) aborts the communicator and throws.
  void wait(Milliseconds timeout = Milliseconds(0)) override;
  std::exception_ptr exception() override;

  // Records the end event on the communicator's stream, after the NCCL calls (enqueue mutex held).
  void record_end();
  uint64_t ledger_id = 0;  // the call's record in the collective ledger, finished with the Work

  // For the watchdog: checks the end event and the communicator; fails the Work if its communicator
  // was aborted. Running until the end event completes.
  enum class State { Running, Succeeded, Failed };
  State poll();
  Clock::time_point deadline() const { return enqueued_ + timeout_; }
  Milliseconds group_timeout() const { return timeout_; }
  // Aborts the communicator because this Work ran past `timeout` (`why` says whose timeout it was)
  // and fails it; the other Works on that communicator fail when next polled.
  void time_out(Milliseconds timeout, const char* why);
  // The communicator while the Work runs (null once it finished).
  std::shared_ptr<Communicator> communicator();

 private:
  void fail_locked(std::exception_ptr error);
  void finish_locked();  // drops what the operation no longer uses

  std::mutex mutex_;
  State state_ = State::Running;
  std::exception_ptr error_;
  std::shared_ptr<Communicator> comm_;
  int device_;
  rt::cuda::Event end_;
  std::vector<Tensor> tensors_;
  Milliseconds timeout_;
  Clock::time_point enqueued_;
};

// One thread per process that watches every NcclWork in flight: it drops the finished ones, fails those
// whose communicator was aborted, aborts the communicator of a Work past the group's timeout, and aborts
// one whose NCCL reports an asynchronous error. Started at the first enqueue.
class Watchdog {
 public:
  static Watchdog& instance();
  void add(std::shared_ptr<NcclWork> work);
  ~Watchdog();  // at exit: stops the thread; Works still in flight are left to the process's end

 private:
  Watchdog();
  void loop();
  void scan();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<NcclWork>> works_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rt::dist::nccl
