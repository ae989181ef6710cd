#include "cuda_segment_source.h"

#include <cuda_runtime.h>

#include <string>

#include "allocator_events.h"
#include "cuda/launch.h"
#include "rt/error.h"

namespace rt::cuda {
namespace {

// Makes `index` the current device for its lifetime; status() says whether that worked.
class ScopedDevice {
 public:
  explicit ScopedDevice(int index) {
    status_ = cudaGetDevice(&prev_);
    if (status_ == cudaSuccess && prev_ != index) {
      status_ = cudaSetDevice(index);
      changed_ = status_ == cudaSuccess;
    }
  }
  ~ScopedDevice() {
    if (changed_) cudaSetDevice(prev_);
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  cudaError_t status() const { return status_; }

 private:
  int prev_ = 0;
  bool changed_ = false;
  cudaError_t status_ = cudaSuccess;
};

std::string what(const char* call, size_t bytes, int index) {
  return std::string(call) + " of a " + format_bytes(bytes) + " segment on cuda:" + std::to_string(index);
}

}  // namespace

CudaSegmentSource::CudaSegmentSource(int device_index, CurrentStreamFn current_stream)
    : index_(device_index), current_stream_(current_stream) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw DeviceError("cuda:" + std::to_string(device_index) + " is not usable: cudaGetDeviceCount failed with " +
                      cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                      "); check that an NVIDIA GPU and its driver are present, or run on the CPU");
  }
  if (device_index < 0 || device_index >= count)
    throw DeviceError("cuda:" + std::to_string(device_index) + " does not exist: " + std::to_string(count) +
                      " CUDA device(s) are visible (see CUDA_VISIBLE_DEVICES); use an index from 0 to " +
                      std::to_string(count - 1));
}

void* CudaSegmentSource::allocate_segment(size_t bytes) {
  const ScopedDevice guard(index_);
  cuda_kernels::check_cuda(guard.status(), what("cudaSetDevice before cudaMalloc", bytes, index_).c_str());
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky, but leave no error behind for the next check_launch
    return nullptr;
  }
  cuda_kernels::check_cuda(e, what("cudaMalloc", bytes, index_).c_str());
  return p;
}

void CudaSegmentSource::free_segment(void* p, size_t bytes) {
  const ScopedDevice guard(index_);
  if (guard.status() == cudaErrorCudartUnloading) return;
  cuda_kernels::check_cuda(guard.status(), what("cudaSetDevice before cudaFree", bytes, index_).c_str());
  const cudaError_t e = cudaFree(p);
  if (e == cudaErrorCudartUnloading) return;
  cuda_kernels::check_cuda(e, what("cudaFree", bytes, index_).c_str());
}

MemoryInfo CudaSegmentSource::mem_info() {
  const ScopedDevice guard(index_);
  MemoryInfo info;
  if (guard.status() != cudaSuccess || cudaMemGetInfo(&info.free_bytes, &info.total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return info;
}

Device CudaSegmentSource::device() const { return Device::cuda(index_); }

StreamId CudaSegmentSource::current_stream() { return current_stream_ ? current_stream_(index_) : nullptr; }

void* CudaSegmentSource::record_event(StreamId stream) {
  const ScopedDevice guard(index_);
  cuda_kernels::check_cuda(guard.status(), "cudaSetDevice before cudaEventRecord (caching allocator)");
  return allocator_event_record(stream, "caching allocator");
}
bool CudaSegmentSource::event_done(void* event) { return allocator_event_done(event, "caching allocator"); }
void CudaSegmentSource::wait_event(void* event) { allocator_event_wait(event, "caching allocator"); }
void CudaSegmentSource::destroy_event(void* event) { allocator_event_destroy(event, "caching allocator"); }

}  // namespace rt::cuda
