#include "cuda_pinned_source.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "allocator_events.h"
#include "cuda/launch.h"
#include "rt/error.h"

namespace rt::cuda {
namespace {
// What current_stream() answers: the address of this object, which no stream_key can equal.
const char kNoStream = 0;

struct StreamKey {
  int device;
  void* stream;
};
}  // namespace

void* CudaPinnedSource::allocate_segment(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  cuda_kernels::check_cuda(e, ("cudaHostAlloc of a " + format_bytes(bytes) + " pinned segment").c_str());
  return p;
}

void CudaPinnedSource::free_segment(void* p, size_t bytes) {
  const cudaError_t e = cudaFreeHost(p);
  if (e == cudaErrorCudartUnloading) return;
  cuda_kernels::check_cuda(e, ("cudaFreeHost of a " + format_bytes(bytes) + " pinned segment").c_str());
}

StreamId CudaPinnedSource::stream_key(int device, void* stream) {
  static std::mutex mu;
  static auto* keys = new std::map<std::pair<int, void*>, StreamKey*>();  // never freed: keys live forever
  std::lock_guard<std::mutex> lk(mu);
  StreamKey*& k = (*keys)[{device, stream}];
  if (!k) k = new StreamKey{device, stream};
  return k;
}

StreamId CudaPinnedSource::current_stream() { return const_cast<char*>(&kNoStream); }

void* CudaPinnedSource::record_event(StreamId key) {
  const auto* k = static_cast<const StreamKey*>(key);
  int previous = 0;
  cuda_kernels::check_cuda(cudaGetDevice(&previous), "cudaGetDevice (pinned memory)");
  if (previous != k->device) cuda_kernels::check_cuda(cudaSetDevice(k->device), "cudaSetDevice (pinned memory)");
  void* event = nullptr;
  try {
    event = allocator_event_record(k->stream, "pinned memory");
  } catch (...) {
    if (previous != k->device) cudaSetDevice(previous);
    throw;
  }
  if (previous != k->device) cudaSetDevice(previous);
  return event;
}
bool CudaPinnedSource::event_done(void* event) { return allocator_event_done(event, "pinned memory"); }
void CudaPinnedSource::wait_event(void* event) { allocator_event_wait(event, "pinned memory"); }
void CudaPinnedSource::destroy_event(void* event) { allocator_event_destroy(event, "pinned memory"); }

}  // namespace rt::cuda
