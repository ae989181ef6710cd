#include "cuda_pinned_source.h"

#include <cuda_runtime.h>

#include <string>

#include "allocator_events.h"
#include "launch.h"
#include "rt/error.h"

namespace rt::cuda {
namespace {
// What current_stream() answers: the address of this object, which no cudaStream_t (nor the
// legacy default stream's nullptr) can equal.
const char kNoStream = 0;
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

StreamId CudaPinnedSource::current_stream() { return const_cast<char*>(&kNoStream); }

void* CudaPinnedSource::record_event(StreamId stream) { return allocator_event_record(stream, "pinned memory"); }
bool CudaPinnedSource::event_done(void* event) { return allocator_event_done(event, "pinned memory"); }
void CudaPinnedSource::wait_event(void* event) { allocator_event_wait(event, "pinned memory"); }
void CudaPinnedSource::destroy_event(void* event) { allocator_event_destroy(event, "pinned memory"); }

}  // namespace rt::cuda
