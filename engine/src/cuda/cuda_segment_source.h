// engine/src/cuda/cuda_segment_source.h — a CachingAllocator's segments from cudaMalloc on one device.
//
//   rt::cuda::CudaSegmentSource source(0, &my_current_stream);  // throws rt::DeviceError when cuda:0 is unusable
//   rt::cuda::CachingAllocator alloc(source);  // keep the source alive as long as the allocator
//   source.mem_info().free_bytes;              // cudaMemGetInfo on cuda:0
//
// Every call makes its device current for the call and restores the caller's device after.
// allocate_segment returns nullptr when cudaMalloc reports cudaErrorMemoryAllocation (the
// allocator then empties its cache and retries) and throws rt::Error for any other CUDA error.
// free_segment does nothing once the CUDA runtime is unloading at exit (the driver reclaims the
// memory). Events are cudaEvent_t made with cudaEventDisableTiming on the source's device; the
// current stream is what the function given at construction says for the device (the legacy
// default stream when it is nullptr). Built only with CUDA (RT_CUDA); the header itself needs
// no CUDA headers.
#pragma once
#include <cstddef>

#include "memory/caching_allocator.h"

namespace rt::cuda {

class CudaSegmentSource final : public SegmentSource {
 public:
  using CurrentStreamFn = StreamId (*)(int device_index);
  explicit CudaSegmentSource(int device_index, CurrentStreamFn current_stream = nullptr);

  void* allocate_segment(size_t bytes) override;
  void free_segment(void* p, size_t bytes) override;
  MemoryInfo mem_info() override;  // {0, 0} when CUDA cannot tell
  Device device() const override;
  StreamId current_stream() override;
  void* record_event(StreamId stream) override;
  bool event_done(void* event) override;
  void wait_event(void* event) override;
  void destroy_event(void* event) override;

 private:
  int index_;
  CurrentStreamFn current_stream_;
};

}  // namespace rt::cuda
