// Internal (CUDA builds): device-index checks, the current-device guard, per-device state.
#pragma once
#include <string>

namespace rt::cuda::detail {

// Throws DeviceError naming `what` and unavailable_reason() when no CUDA device is usable.
void require_available(const char* what);
// Resolves -1 to the current device and checks the range; throws DeviceError otherwise.
int checked_index(int device, const char* what);

// Makes `device` current for the guard's lifetime (no-op when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = -1;
};

// The calling thread's current stream of `device` as a cudaStream_t (streams.cpp).
void* current_stream_handle(int device);
// CachingAllocator::record_stream on `device`'s allocator; ValueError for memory it does not own.
void record_stream(void* data, int device, void* stream);

}  // namespace rt::cuda::detail
