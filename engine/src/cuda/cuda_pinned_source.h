// engine/src/cuda/cuda_pinned_source.h — a CachingAllocator's segments of page-locked host memory.
//
//   rt::cuda::CudaPinnedSource source;          // cudaHostAlloc / cudaFreeHost
//   rt::cuda::CachingAllocator pinned(source);  // blocks of host memory a GPU copies from directly
//   void* p = pinned.allocate(1 << 20);         // host memory: CPU kernels read and write it
//   pinned.record_stream(p, CudaPinnedSource::stream_key(0, stream));  // an async copy on cuda:0's `stream` reads it ...
//   pinned.deallocate(p, 1 << 20);              // ... so it is reused only after that copy
//
// Pinned blocks belong to no stream: current_stream() is a tag no key can equal, so every stream a
// block is used on, the legacy default stream included, must be recorded with record_stream (the
// engine's non-blocking copy does it). Pinned memory serves every device, so the StreamIds given
// to record_stream are stream_key(device, stream): a stable key naming both, from which
// record_event() records on that stream with its device made current. device() is the CPU: the
// memory events of pinned tensors join the host's. allocate_segment returns nullptr when
// cudaHostAlloc reports cudaErrorMemoryAllocation and throws rt::Error for other CUDA errors;
// mem_info() is unknown ({0, 0}). Built only with CUDA; the header needs no CUDA headers.
#pragma once
#include <cstddef>

#include "memory/caching_allocator.h"

namespace rt::cuda {

class CudaPinnedSource final : public SegmentSource {
 public:
  // The key for cudaStream_t `stream` (nullptr: the legacy default stream) of CUDA device `device`;
  // the same pair always gives the same key, valid for the whole process.
  static StreamId stream_key(int device, void* stream);

  void* allocate_segment(size_t bytes) override;
  void free_segment(void* p, size_t bytes) override;
  MemoryInfo mem_info() override { return {}; }
  Device device() const override { return Device::cpu(); }
  StreamId current_stream() override;
  void* record_event(StreamId stream) override;
  bool event_done(void* event) override;
  void wait_event(void* event) override;
  void destroy_event(void* event) override;
};

}  // namespace rt::cuda
