// NCCL's types, the device guard and the non-blocking communicator (nccl_comm.h).
#include "nccl/nccl_comm.h"

#include <fmt/core.h>

#include <cstring>

namespace rt::dist::nccl {

ncclDataType_t datatype_of(ScalarType dtype) {
  switch (dtype) {
    case kBool:
    case kUInt8: return ncclUint8;
    case kInt32: return ncclInt32;
    case kInt64: return ncclInt64;
    case kFloat16: return ncclFloat16;
    case kBFloat16: return ncclBfloat16;
    case kFloat32: return ncclFloat32;
    case kFloat64: return ncclFloat64;
  }
  throw DTypeError(fmt::format("the nccl backend cannot move {} tensors", dtype_name(dtype)));
}

ncclRedOp_t op_of(ScalarType dtype, ReduceOp op) {
  if (dtype == kBool) return op == ReduceOp::Sum || op == ReduceOp::Max ? ncclMax : ncclMin;
  switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Product: return ncclProd;
    case ReduceOp::Min: return ncclMin;
    case ReduceOp::Max: return ncclMax;
  }
  return ncclSum;
}

std::string version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "NCCL (version unknown)";
  // Since 2.9 the code is major * 10000 + minor * 100 + patch.
  return fmt::format("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100);
}

std::string describe(ncclResult_t result, ncclComm_t comm) {
  std::string text = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0' && text.find(last) == std::string::npos) text += fmt::format(" ({})", last);
  return text;
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&saved_) != cudaSuccess) saved_ = -1;
  if (saved_ != device) cudaSetDevice(device);
  else saved_ = -1;  // nothing to restore
}

DeviceGuard::~DeviceGuard() {
  if (saved_ >= 0) cudaSetDevice(saved_);
}

void back_off(int& round) {
  if (++round < 64) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(round < 1000 ? 50 : 1000));
}

Communicator::Communicator(const ncclUniqueId& id, int rank, int size, int device, Milliseconds timeout,
                           std::string group)
    : device_(device), stream_(rt::cuda::Stream::create(device, /*priority=*/-1)), group_(std::move(group)),
      timeout_(timeout) {
  DeviceGuard guard(device);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclUniqueId unique_id = id;
  const auto deadline = Clock::now() + timeout;
  ncclResult_t r = ncclCommInitRankConfig(&comm_, size, unique_id, rank, &config);
  if ((r == ncclSuccess || r == ncclInProgress) && comm_ != nullptr) r = wait_ready(deadline);
  if (r == ncclSuccess) return;
  const std::string why = r == ncclInProgress ? std::string() : describe(r, comm_);
  if (comm_ != nullptr) {  // also ends a creation still in progress; see Note [NCCL abort] for the thread
    std::thread([comm = comm_, device] {
      DeviceGuard on_device(device);
      ncclCommAbort(comm);
    }).detach();
  }
  comm_ = nullptr;
  if (r == ncclInProgress)
    throw DistBackendError(fmt::format(
        "NCCL could not create the communicator of {} for rank {} on cuda:{} within the group's timeout of {} ms, "
        "and gave up (ncclCommAbort). Hint: NCCL creates it at the first CUDA collective of the group, and every "
        "rank must make that call; a rank that has not reached it, or has died, holds up the others. Start all "
        "ranks, or raise the timeout (init_process_group(timeout=...))",
        group_, rank, device, timeout.count()));
  throw DistBackendError(fmt::format("NCCL could not create the communicator of {} for rank {} on cuda:{}: {}. "
                                     "Hint: NCCL_DEBUG=INFO makes NCCL say more",
                                     group_, rank, device, why));
}

Communicator::~Communicator() {
  if (comm_ == nullptr || aborted()) return;
  DeviceGuard guard(device_);
  ncclResult_t r = ncclCommFinalize(comm_);
  if (r == ncclSuccess || r == ncclInProgress) r = wait_ready(Clock::now() + timeout_);
  if (r != ncclSuccess) {
    ncclCommAbort(comm_);  // a peer never finished its part: nothing else frees it
    return;
  }
  ncclCommDestroy(comm_);
}

ncclResult_t Communicator::wait_ready(Clock::time_point deadline) {
  int round = 0;
  for (;;) {
    ncclResult_t state = ncclInProgress;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    if (r != ncclSuccess) return r;
    if (state != ncclInProgress) return state;
    if (Clock::now() >= deadline) return ncclInProgress;
    back_off(round);
  }
}

std::string Communicator::async_error() {
  std::unique_lock<std::mutex> lock(enqueue_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || aborted()) return "";  // busy: the next scan asks again
  ncclResult_t state = ncclSuccess;
  const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
  if (r != ncclSuccess) return describe(r, comm_);
  if (state == ncclSuccess || state == ncclInProgress) return "";
  return describe(state, comm_);
}

bool Communicator::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(reason_mutex_);
    if (aborted_.load(std::memory_order_relaxed)) return false;
    abort_reason_ = reason;
    aborted_.store(true, std::memory_order_release);
  }
  std::thread([self = shared_from_this()] {
    std::lock_guard<std::mutex> lock(self->enqueue_mutex_);
    DeviceGuard on_device(self->device_);
    ncclCommAbort(self->comm_);
  }).detach();
  return true;
}

std::string Communicator::abort_reason() const {
  std::lock_guard<std::mutex> lock(reason_mutex_);
  return abort_reason_;
}

}  // namespace rt::dist::nccl
