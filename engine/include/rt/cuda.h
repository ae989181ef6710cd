// rt/cuda.h — CUDA devices: what was built, what is usable, memory, synchronisation, events.
//
//   if (rt::cuda::is_available()) {
//     rt::Tensor x = rt::randn({4096, 4096}).cuda();     // or .to(rt::Device::cuda(0))
//     rt::cuda::Event start(/*enable_timing=*/true), end(true);
//     start.record();
//     rt::Tensor y = rt::matmul(x, x);                     // cuBLAS, asynchronous
//     end.record();
//     end.synchronize();
//     std::printf("%.3f ms, %zu bytes in tensors\n", start.elapsed_ms(end), rt::cuda::memory_allocated());
//   } else {
//     std::puts(rt::cuda::unavailable_reason().c_str());  // why not: not built, or no usable device
//   }
//
// Contracts:
// - Nothing here throws on a machine without a GPU except the calls that need one (they throw
//   rt::DeviceError saying why CUDA is unusable). Any error of cudaGetDeviceCount counts as "no
//   device" (a driverless machine reports code 35 or 100).
// - Work runs on one stream per device, the legacy default stream, in the order ops are
//   called; tensors' memory comes from a caching allocator per device (PyTorch's block sizes,
//   see kernels/cuda/caching_allocator.h) that reports the same memory events and categories
//   as the CPU allocator. User-created streams are not supported yet.
// - A device index of -1 means the current device.
#pragma once
#include <cstddef>
#include <string>
#include <utility>

namespace rt::cuda {

bool is_built();        // compiled with the CUDA backend (RT_CUDA)
int device_count();     // usable devices; 0 when not built or no driver/device
bool is_available();    // is_built() && device_count() > 0
// Why is_available() is false ("" when it is true): names what is missing and the fix.
std::string unavailable_reason();
// "CUDA 13.0 (runtime), driver 13.0" or "not built"; for `rtorch info`.
std::string version_string();

struct DeviceProperties {
  std::string name;            // "NVIDIA H200"
  int major = 0, minor = 0;    // compute capability
  size_t total_memory = 0;     // bytes
  int multiprocessors = 0;
};
DeviceProperties device_properties(int device = -1);

int current_device();
void set_device(int device);   // throws DeviceError for an index outside [0, device_count())

// Waits until all work queued on `device` has finished (cudaDeviceSynchronize).
void synchronize(int device = -1);

// Memory held by tensors on `device`, its peak since the last reset, and memory reserved by the
// caching allocator (held in segments, including cached free blocks). Zero on a device never used.
size_t memory_allocated(int device = -1);
size_t max_memory_allocated(int device = -1);
size_t memory_reserved(int device = -1);
size_t max_memory_reserved(int device = -1);  // peak of memory_reserved since the last reset
void reset_peak_memory_stats(int device = -1);
// The caching allocator's counters for `device` (torch.cuda.memory_stats()' core keys); all zero
// without a device or on a device never used.
struct MemoryStats {
  size_t allocated_bytes = 0, peak_allocated_bytes = 0, reserved_bytes = 0, peak_reserved_bytes = 0;
  size_t segments = 0;       // segments held (cudaMalloc'd blocks of 2 MiB, 20 MiB or more)
  size_t allocations = 0;    // live blocks handed out
  size_t alloc_retries = 0;  // allocations that emptied the cache and asked the driver again
  size_t ooms = 0;           // allocations that ended in OutOfMemoryError
};
MemoryStats memory_stats(int device = -1);
// Free and total memory of `device` as the driver sees it (cudaMemGetInfo): memory held by this
// process's caching allocator counts as used. Throws DeviceError without a usable device.
std::pair<size_t, size_t> mem_get_info(int device = -1);
// Returns cached free segments of every device to the driver; live tensors are untouched.
void empty_cache();

// TF32 matrix products for float32 (cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32): about 3e-4 relative
// error instead of float32's 1e-6, several times the throughput. Off by default, as PyTorch's
// torch.backends.cuda.matmul.allow_tf32.
void set_allow_tf32(bool allow);
bool allow_tf32();

// The stream the ops on a device run on. There is one per device (the legacy default
// stream); user-created streams are not supported yet, so this is what PyTorch's
// torch.cuda.current_stream() returns in a program that never makes a stream.
class Stream {
 public:
  static Stream current(int device = -1);
  int device() const { return device_; }
  void* handle() const { return handle_; }  // cudaStream_t
  void synchronize() const;                 // waits for all work queued on it
  bool query() const;                       // true once that work has finished

 private:
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  int device_ = 0;
  void* handle_ = nullptr;
};

// A CUDA event on the current device's stream, for timing and waiting.
class Event {
 public:
  explicit Event(bool enable_timing = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record();              // marks the point in the stream
  void synchronize() const;   // waits until the stream reached the mark
  bool query() const;         // true once reached
  float elapsed_ms(const Event& end) const;  // both recorded with enable_timing

 private:
  void* event_ = nullptr;     // cudaEvent_t
};

}  // namespace rt::cuda
