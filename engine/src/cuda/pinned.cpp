// Pinned host memory (rt/cuda.h): the process's caching allocator of cudaHostAlloc'd segments,
// pin_memory and is_pinned.
#include <atomic>
#include <mutex>

#include "ops/cpu_view.h"
#include "memory/caching_allocator.h"
#include "cuda/cuda_pinned_source.h"
#include "cuda/backend.h"
#include "cuda/device_state.h"
#include "rt/cuda.h"
#include "rt/error.h"
#include "rt/tensor.h"

namespace rt::cuda {
namespace detail {
namespace {

struct PinnedMemory {
  CudaPinnedSource source;
  CachingAllocator allocator{source};
};

// Leaked on purpose, as the device allocators: pinned tensors may be freed after main returns.
CachingAllocator* existing_pinned(bool create) {
  static std::atomic<PinnedMemory*> pinned{nullptr};
  static std::once_flag once;
  if (create) std::call_once(once, [] { pinned.store(new PinnedMemory(), std::memory_order_release); });
  PinnedMemory* p = pinned.load(std::memory_order_acquire);
  return p ? &p->allocator : nullptr;
}

}  // namespace

Allocator* pinned_allocator() {
  require_available("pinned memory");
  return existing_pinned(/*create=*/true);
}

void record_pinned_use(const Tensor& pinned, Device device, void* stream) {
  static_cast<CachingAllocator*>(pinned_allocator())
      ->record_stream(pinned.storage().data(), CudaPinnedSource::stream_key(device.index, stream));
}

}  // namespace detail

bool is_pinned(const Tensor& tensor) {
  if (!tensor.defined() || !tensor.device().is_cpu() || !is_available()) return false;
  const Allocator* pinned = detail::existing_pinned(/*create=*/false);
  return pinned && tensor.storage().allocator() == pinned;
}

Tensor pin_memory(const Tensor& tensor) {
  if (!tensor.device().is_cpu())
    throw DeviceError("pin_memory: the tensor is on " + tensor.device().str() +
                      "; only CPU tensors can be pinned (it is already where a GPU reads it)");
  if (is_pinned(tensor)) return tensor;
  Tensor out = make_tensor(tensor.sizes(), tensor.dtype(), detail::pinned_allocator());
  cpu::copy_kernel(cpu_view(out), cpu_view(tensor));
  return out;
}

}  // namespace rt::cuda
