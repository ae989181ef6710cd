// Per-device state of the CUDA backend: one caching allocator per device, created on first use
// and kept for the whole process (tensors may be freed during static destruction), plus the
// device checks and memory statistics of rt/cuda.h. Blocks go to the stream current on the
// allocating thread (streams.cpp keeps it).
#include "cuda/device_state.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "memory/caching_allocator.h"
#include "cuda/cuda_segment_source.h"
#include "../../kernels/cuda/launch.h"
#include "cuda/backend.h"
#include "rt/cuda.h"
#include "rt/error.h"

namespace rt::cuda {
namespace detail {
namespace {

struct DeviceMemory {
  // PYTORCH_NO_CUDA_MEMORY_CACHING=1: a cudaMalloc per tensor (for compute-sanitizer; caching_allocator.h).
  explicit DeviceMemory(int index)
      : source(index, &current_stream_handle),
        allocator(source, {.caching = !no_caching_requested(std::getenv("PYTORCH_NO_CUDA_MEMORY_CACHING"))}) {}
  CudaSegmentSource source;
  CachingAllocator allocator;
};

std::mutex g_mu;
// Leaked on purpose: tensors held by statics are freed after main returns.
std::vector<DeviceMemory*>& devices() {
  static auto* v = new std::vector<DeviceMemory*>();
  return *v;
}

DeviceMemory& memory_of(int index) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto& v = devices();
  if (v.empty()) v.resize(size_t(device_count()), nullptr);
  if (!v[size_t(index)]) v[size_t(index)] = new DeviceMemory(index);
  return *v[size_t(index)];
}

// The allocator of `index` if it was ever created, else nullptr (no device touched).
CachingAllocator* existing(int index) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto& v = devices();
  return size_t(index) < v.size() && v[size_t(index)] ? &v[size_t(index)]->allocator : nullptr;
}

}  // namespace

void require_available(const char* what) {
  if (!is_available()) throw DeviceError(std::string(what) + ": " + unavailable_reason());
}

int checked_index(int device, const char* what) {
  require_available(what);
  if (device == -1) {
    int d = 0;
    cuda_kernels::check_cuda(cudaGetDevice(&d), "cudaGetDevice");
    return d;
  }
  if (device < 0 || device >= device_count())
    throw DeviceError(std::string(what) + ": CUDA device " + std::to_string(device) + " does not exist; this machine has " +
                      std::to_string(device_count()) + " (cuda:0" +
                      (device_count() > 1 ? " .. cuda:" + std::to_string(device_count() - 1) : std::string()) + ")");
  return device;
}

DeviceGuard::DeviceGuard(int device) {
  int current = 0;
  cuda_kernels::check_cuda(cudaGetDevice(&current), "cudaGetDevice");
  if (current != device) {
    cuda_kernels::check_cuda(cudaSetDevice(device), "cudaSetDevice");
    saved_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (saved_ >= 0) cudaSetDevice(saved_);
}

Allocator* device_allocator(int index) {
  return &memory_of(checked_index(index, ("allocating on cuda:" + std::to_string(index)).c_str())).allocator;
}

void record_stream(void* data, int device, void* stream) {
  auto* a = existing(checked_index(device, "record_stream"));
  if (!a)
    throw ValueError("record_stream: nothing was ever allocated on cuda:" + std::to_string(device) +
                     ", so this memory did not come from its caching allocator");
  a->record_stream(data, stream);
}

}  // namespace detail

size_t memory_allocated(int device) {
  if (!is_available()) return 0;
  auto* a = detail::existing(detail::checked_index(device, "memory_allocated"));
  return a ? a->stats().allocated_bytes : 0;
}

size_t max_memory_allocated(int device) {
  if (!is_available()) return 0;
  auto* a = detail::existing(detail::checked_index(device, "max_memory_allocated"));
  return a ? a->stats().peak_allocated_bytes : 0;
}

size_t memory_reserved(int device) {
  if (!is_available()) return 0;
  auto* a = detail::existing(detail::checked_index(device, "memory_reserved"));
  return a ? a->stats().reserved_bytes : 0;
}

MemoryStats memory_stats(int device) {
  if (!is_available()) return {};
  auto* a = detail::existing(detail::checked_index(device, "memory_stats"));
  if (!a) return {};
  const AllocatorStats s = a->stats();
  return {s.allocated_bytes, s.peak_allocated_bytes, s.reserved_bytes, s.peak_reserved_bytes,
          s.segments, s.allocations, s.alloc_retries, s.ooms, s.pending_events};
}

size_t max_memory_reserved(int device) { return memory_stats(device).peak_reserved_bytes; }

void reset_peak_memory_stats(int device) {
  if (!is_available()) return;
  if (auto* a = detail::existing(detail::checked_index(device, "reset_peak_memory_stats"))) a->reset_peak();
}

void empty_cache() {
  if (!is_available()) return;
  for (int d = 0; d < device_count(); ++d)
    if (auto* a = detail::existing(d)) a->empty_cache();
}

}  // namespace rt::cuda
