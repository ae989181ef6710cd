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
//   // Overlap work on a second stream (torch.cuda.Stream / torch.cuda.stream):
//   rt::cuda::Stream side = rt::cuda::Stream::create();
//   side.wait_stream(rt::cuda::Stream::current());        // x is ready before side reads it
//   {
//     rt::cuda::StreamGuard on_side(side);                 // ops below launch on `side`
//     rt::Tensor z = rt::relu(x);
//     rt::cuda::record_stream(x, side);                    // x's memory is reused only after side used it
//   }
//   rt::cuda::Stream::current().wait_stream(side);         // later work here sees z
//
// Contracts:
// - Nothing here throws on a machine without a GPU except the calls that need one (they throw
//   rt::DeviceError saying why CUDA is unusable). Any error of cudaGetDeviceCount counts as "no
//   device" (a driverless machine reports code 35 or 100).
// - Ops launch on the calling thread's current stream of their device: the legacy default
//   stream unless set_current_stream or a StreamGuard chose another (PyTorch's rules). Streams
//   from Stream::create are non-blocking: they do not wait for the legacy stream nor it for
//   them, so order work across streams with wait_stream / wait_event. Copies to and from the
//   host run on the current stream and return when it has finished them, except a non_blocking
//   copy from pinned memory (pin_memory below), which is only queued. Backward nodes run on the
//   stream their forward op ran on (Note [Backward streams] in engine/src/autograd).
// - Tensors' memory comes from a caching allocator per device (PyTorch's block sizes, see
//   engine/src/memory/caching_allocator.h) that reports the same memory events and categories as
//   the CPU allocator. A block belongs to the stream current when it was allocated; a tensor
//   used on another stream needs record_stream(tensor, stream) before it is freed, or its
//   memory may be reused while that stream still reads it.
// - A device index of -1 means the current device.
#pragma once
#include <cstddef>
#include <string>
#include <utility>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {
class Tensor;
}

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
  size_t pending_events = 0; // events on other streams that freed blocks wait for (record_stream)
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

class Event;

// A CUDA stream of one device: a queue of work that runs in order. Copyable handle; streams are
// never destroyed (Stream::create hands out streams of a per-device pool, as PyTorch does).
class Stream {
 public:
  // A stream of `device`'s pool, round robin over 32 streams per priority, created non-blocking
  // on first use (torch.cuda.Stream(device, priority)). priority < 0 asks for the device's
  // highest priority (cudaDeviceGetStreamPriorityRange), anything else for the default one.
  static Stream create(int device = -1, int priority = 0);
  // The calling thread's current stream of `device` (torch.cuda.current_stream).
  static Stream current(int device = -1);
  // The legacy default stream of `device` (torch.cuda.default_stream); handle() is nullptr.
  static Stream default_stream(int device = -1);

  int device() const { return device_; }
  void* handle() const { return handle_; }  // cudaStream_t
  int priority() const;                     // CUDA's value: lower runs first
  void synchronize() const;                 // waits for all work queued on it
  bool query() const;                       // true once that work has finished
  // Work queued on this stream from now on waits until `event` (recorded) has completed; an
  // event never recorded is complete. Does not block the host.
  void wait_event(const Event& event) const;
  // Work queued on this stream from now on waits for the work queued on `other` so far.
  void wait_stream(const Stream& other) const;

  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  int device_ = 0;
  void* handle_ = nullptr;
};

// Makes `stream` the calling thread's current stream of its device.
void set_current_stream(const Stream& stream);

// For its lifetime: `stream`'s device is the current device and `stream` its current stream
// (torch.cuda.stream(s)); both are restored after.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  int saved_device_ = -1;
  void* saved_stream_ = nullptr;  // the previous current stream of `stream`'s device
  int device_ = 0;
};

// Work on `stream` uses `tensor`'s memory (Tensor.record_stream): when the last view of its
// storage dies, the memory is reused only after the work queued on `stream` by then. Throws
// DeviceError for a CPU tensor or a stream of another device, ValueError for memory that did
// not come from the caching allocator.
void record_stream(const Tensor& tensor, const Stream& stream);

// Pinned (page-locked) host memory, as torch's Tensor.pin_memory(): a GPU reads it directly, so
// rt::to_device(pinned, Device::cuda(0), /*non_blocking=*/true) queues the copy on the current
// stream and returns at once (a later op on that stream sees the data). It comes from a caching
// allocator of cudaHostAlloc'd segments; a block an asynchronous copy reads is reused only after
// the copy. A pinned tensor is an ordinary CPU tensor otherwise.
//
//   rt::Tensor batch = rt::cuda::pin_memory(rt::randn({256, 784}));
//   rt::Tensor x = rt::to_device(batch, rt::Device::cuda(0), /*non_blocking=*/true);
//
// pin_memory returns `tensor` itself when it is already pinned, else a pinned contiguous copy;
// it throws DeviceError for a GPU tensor or when CUDA is unusable. is_pinned is false for GPU
// tensors and in builds or on machines without CUDA.
Tensor pin_memory(const Tensor& tensor);
bool is_pinned(const Tensor& tensor);

// A CUDA event (torch.cuda.Event): a point in a stream's work, for timing and ordering. The
// CUDA event is created at the first record(), on the recording stream's device; before that
// query() is true and synchronize() returns at once. `blocking`: synchronize() sleeps instead of
// spinning (cudaEventBlockingSync).
class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record();                       // on the current stream of the current device
  void record(const Stream& stream);   // marks the work queued on `stream` so far
  void wait(const Stream& stream) const;  // stream.wait_event(*this)
  void synchronize() const;   // waits until the stream reached the mark
  bool query() const;         // true once reached
  float elapsed_ms(const Event& end) const;  // both recorded with enable_timing
  void* handle() const { return event_; }    // cudaEvent_t, nullptr before the first record

 private:
  bool enable_timing_ = false;
  bool blocking_ = false;
  int device_ = -1;           // of the first record
  void* event_ = nullptr;     // cudaEvent_t
};

}  // namespace rt::cuda

RT_API_END
