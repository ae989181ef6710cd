// Streams and events of rt/cuda.h: the per-device stream pools, each thread's current stream,
// StreamGuard, record_stream, and Event.
//
// Note [Stream pool]
// As PyTorch does, Stream::create never makes a stream of its own: each device has 32 streams of
// the default priority and 32 of the highest, created non-blocking when the device's pool is
// first used and handed out round robin. Streams therefore live as long as the process, so the
// caching allocator may key blocks by cudaStream_t without the handle ever being reused for
// another stream, and a program that makes a Stream per step does not leak.
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "../../kernels/cuda/launch.h"
#include "cuda/backend.h"
#include "cuda/device_state.h"
#include "rt/cuda.h"
#include "rt/error.h"
#include "rt/tensor.h"

namespace rt::cuda {
namespace detail {
namespace {

constexpr size_t kStreamsPerPriority = 32;

struct StreamPool {
  std::once_flag created;
  int default_priority = 0, high_priority = 0;
  std::array<cudaStream_t, kStreamsPerPriority> normal{}, high{};
  std::atomic<uint32_t> next_normal{0}, next_high{0};
};

// Leaked on purpose, like the streams in it (Note [Stream pool]).
StreamPool& pool_of(int device) {
  static std::vector<StreamPool*>* pools = [] {
    auto* v = new std::vector<StreamPool*>(size_t(device_count()));
    for (auto& p : *v) p = new StreamPool;
    return v;
  }();
  StreamPool& pool = *(*pools)[size_t(device)];
  std::call_once(pool.created, [&] {
    DeviceGuard guard(device);
    cuda_kernels::check_cuda(cudaDeviceGetStreamPriorityRange(&pool.default_priority, &pool.high_priority),
                             "cudaDeviceGetStreamPriorityRange");
    for (size_t i = 0; i < kStreamsPerPriority; ++i) {
      cuda_kernels::check_cuda(cudaStreamCreateWithPriority(&pool.normal[i], cudaStreamNonBlocking, pool.default_priority),
                               "cudaStreamCreateWithPriority");
      cuda_kernels::check_cuda(cudaStreamCreateWithPriority(&pool.high[i], cudaStreamNonBlocking, pool.high_priority),
                               "cudaStreamCreateWithPriority");
    }
  });
  return pool;
}

// The calling thread's current stream of each device; nullptr, the legacy default stream, until set.
void*& current_slot(int device) {
  thread_local std::vector<void*> current;
  if (current.size() <= size_t(device)) current.resize(size_t(device) + 1, nullptr);
  return current[size_t(device)];
}

cudaStream_t as_stream(const Stream& s) { return static_cast<cudaStream_t>(s.handle()); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }

}  // namespace

void* stream(Device device) { return current_slot(device.index); }
void set_stream(Device device, void* s) { current_slot(device.index) = s; }
void stream_wait(Device device, void* waiting, void* producer) {
  if (waiting == producer) return;
  DeviceGuard guard(device.index);
  cudaEvent_t e = nullptr;
  cuda_kernels::check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate (stream_wait)");
  const cudaError_t recorded = cudaEventRecord(e, static_cast<cudaStream_t>(producer));
  const cudaError_t waited =
      recorded == cudaSuccess ? cudaStreamWaitEvent(static_cast<cudaStream_t>(waiting), e, 0) : recorded;
  cudaEventDestroy(e);  // the wait is queued: destroying the event now is safe
  cuda_kernels::check_cuda(waited, "stream_wait");
}
void* current_stream_handle(int device) { return current_slot(device); }

}  // namespace detail

// ---- Stream ---------------------------------------------------------------------------------
Stream Stream::create(int device, int priority) {
  const int d = detail::checked_index(device, "Stream.create");
  detail::StreamPool& pool = detail::pool_of(d);
  if (priority < 0)
    return Stream(d, pool.high[pool.next_high.fetch_add(1, std::memory_order_relaxed) % detail::kStreamsPerPriority]);
  return Stream(d, pool.normal[pool.next_normal.fetch_add(1, std::memory_order_relaxed) % detail::kStreamsPerPriority]);
}

Stream Stream::current(int device) {
  const int d = detail::checked_index(device, "Stream.current");
  return Stream(d, detail::current_slot(d));
}

Stream Stream::default_stream(int device) { return Stream(detail::checked_index(device, "Stream.default_stream"), nullptr); }

int Stream::priority() const {
  detail::DeviceGuard guard(device_);
  int p = 0;
  cuda_kernels::check_cuda(cudaStreamGetPriority(detail::as_stream(*this), &p), "Stream.priority");
  return p;
}

void Stream::synchronize() const {
  detail::DeviceGuard guard(device_);
  cuda_kernels::check_cuda(cudaStreamSynchronize(detail::as_stream(*this)), "Stream.synchronize");
}

bool Stream::query() const {
  detail::DeviceGuard guard(device_);
  return cuda_kernels::completed(cudaStreamQuery(detail::as_stream(*this)), "Stream.query");
}

void Stream::wait_event(const Event& event) const {
  if (!event.handle()) return;  // never recorded: nothing to wait for
  detail::DeviceGuard guard(device_);
  cuda_kernels::check_cuda(cudaStreamWaitEvent(detail::as_stream(*this), detail::as_event(event.handle()), 0),
                           "Stream.wait_event");
}

void Stream::wait_stream(const Stream& other) const {
  if (other == *this) return;
  Event mark;
  mark.record(other);
  wait_event(mark);  // the wait is queued: destroying the event now is safe
}

void set_current_stream(const Stream& stream) {
  detail::checked_index(stream.device(), "set_current_stream");
  detail::current_slot(stream.device()) = stream.handle();
}

StreamGuard::StreamGuard(const Stream& stream) : device_(stream.device()) {
  detail::checked_index(device_, "StreamGuard");
  const int current = current_device();
  if (current != device_) {
    set_device(device_);
    saved_device_ = current;
  }
  saved_stream_ = detail::current_slot(device_);
  detail::current_slot(device_) = stream.handle();
}

StreamGuard::~StreamGuard() {
  detail::current_slot(device_) = saved_stream_;
  if (saved_device_ >= 0) cudaSetDevice(saved_device_);
}

void record_stream(const Tensor& tensor, const Stream& stream) {
  if (!tensor.device().is_cuda())
    throw DeviceError("record_stream: the tensor is on " + tensor.device().str() +
                      "; only CUDA tensors have memory a stream can use");
  if (tensor.numel() == 0 || !tensor.storage().data()) return;  // no memory to keep (as PyTorch)
  if (tensor.device().index != stream.device())
    throw DeviceError("record_stream: the tensor is on " + tensor.device().str() + " but the stream belongs to cuda:" +
                      std::to_string(stream.device()) + "; record a stream of the tensor's device");
  try {
    detail::record_stream(tensor.storage().data(), stream.device(), stream.handle());
  } catch (const ValueError&) {
    throw ValueError("record_stream: this tensor's memory on " + tensor.device().str() +
                     " did not come from rustytorch's caching allocator (it wraps memory owned elsewhere), so its "
                     "reuse cannot be deferred; keep the tensor alive until the stream is done with it");
  }
}

// ---- Event ----------------------------------------------------------------------------------
Event::Event(bool enable_timing, bool blocking) : enable_timing_(enable_timing), blocking_(blocking) {
  detail::require_available("Event");
}

Event::~Event() {
  if (event_) cudaEventDestroy(detail::as_event(event_));
}

Event::Event(Event&& other) noexcept
    : enable_timing_(other.enable_timing_),
      blocking_(other.blocking_),
      device_(other.device_),
      event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_) cudaEventDestroy(detail::as_event(event_));
    enable_timing_ = other.enable_timing_;
    blocking_ = other.blocking_;
    device_ = other.device_;
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record() { record(Stream::current()); }

void Event::record(const Stream& stream) {
  detail::DeviceGuard guard(stream.device());
  if (!event_) {
    cudaEvent_t e = nullptr;
    const unsigned flags = (enable_timing_ ? cudaEventDefault : cudaEventDisableTiming) |
                           (blocking_ ? cudaEventBlockingSync : cudaEventDefault);
    cuda_kernels::check_cuda(cudaEventCreateWithFlags(&e, flags), "cudaEventCreate");
    event_ = e;
    device_ = stream.device();
  } else if (device_ != stream.device()) {
    throw DeviceError("Event.record: this event was first recorded on cuda:" + std::to_string(device_) +
                      " and cannot mark a stream of cuda:" + std::to_string(stream.device()) +
                      "; use one event per device");
  }
  cuda_kernels::check_cuda(cudaEventRecord(detail::as_event(event_), detail::as_stream(stream)), "cudaEventRecord");
}

void Event::wait(const Stream& stream) const { stream.wait_event(*this); }

void Event::synchronize() const {
  if (!event_) return;
  cuda_kernels::check_cuda(cudaEventSynchronize(detail::as_event(event_)), "cudaEventSynchronize");
}

bool Event::query() const {
  if (!event_) return true;
  return cuda_kernels::completed(cudaEventQuery(detail::as_event(event_)), "cudaEventQuery");
}

float Event::elapsed_ms(const Event& end) const {
  if (!event_ || !end.event_)
    throw ValueError("elapsed time between events: both must be recorded first (call record() on each)");
  if (!enable_timing_ || !end.enable_timing_)
    throw ValueError("elapsed time between events: both need enable_timing=true (Event(enable_timing=True)) when they are made");
  float ms = 0.f;
  cuda_kernels::check_cuda(cudaEventElapsedTime(&ms, detail::as_event(event_), detail::as_event(end.event_)),
                           "elapsed time between events (has the later one completed? synchronize() it first)");
  return ms;
}

}  // namespace rt::cuda
