// kernels/cuda/cuda_segment_source.h — a CachingAllocator's segments from cudaMalloc on one device.
//
//   rt::cuda::CudaSegmentSource source(0);     // throws rt::DeviceError when cuda:0 is unusable
//   rt::cuda::CachingAllocator alloc(source);  // keep the source alive as long as the allocator
//   source.mem_info().free_bytes;              // cudaMemGetInfo on cuda:0
//
// Every call makes its device current for the call and restores the caller's device after.
// allocate_segment returns nullptr when cudaMalloc reports cudaErrorMemoryAllocation (the
// allocator then empties its cache and retries) and throws rt::Error for any other CUDA error.
// free_segment does nothing once the CUDA runtime is unloading at exit (the driver reclaims the
// memory). Built only with CUDA (RT_CUDA); the header itself needs no CUDA headers.
#pragma once
#include <cstddef>

#include "caching_allocator.h"

namespace rt::cuda {

class CudaSegmentSource final : public SegmentSource {
 public:
  explicit CudaSegmentSource(int device_index);

  void* allocate_segment(size_t bytes) override;
  void free_segment(void* p, size_t bytes) override;
  MemoryInfo mem_info() override;  // {0, 0} when CUDA cannot tell
  Device device() const override;

 private:
  int index_;
};

}  // namespace rt::cuda
