#include "allocator_events.h"

#include <cuda_runtime.h>

#include <string>

#include "cuda/launch.h"

namespace rt::cuda {
namespace {
std::string in(const char* call, const char* who) { return std::string(call) + " (" + who + ")"; }
}  // namespace

void* allocator_event_record(void* stream, const char* who) {
  cudaEvent_t e = nullptr;
  cuda_kernels::check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), in("cudaEventCreate", who).c_str());
  const cudaError_t r = cudaEventRecord(e, static_cast<cudaStream_t>(stream));
  if (r != cudaSuccess) {
    cudaEventDestroy(e);
    cuda_kernels::throw_cuda_error(r, in("cudaEventRecord", who).c_str());
  }
  return e;
}

bool allocator_event_done(void* event, const char* who) {
  return cuda_kernels::completed(cudaEventQuery(static_cast<cudaEvent_t>(event)), in("cudaEventQuery", who).c_str());
}

void allocator_event_wait(void* event, const char* who) {
  cuda_kernels::check_cuda(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), in("cudaEventSynchronize", who).c_str());
}

void allocator_event_destroy(void* event, const char* who) {
  const cudaError_t e = cudaEventDestroy(static_cast<cudaEvent_t>(event));
  if (e == cudaErrorCudartUnloading) return;
  cuda_kernels::check_cuda(e, in("cudaEventDestroy", who).c_str());
}

}  // namespace rt::cuda
