// kernels/cuda/device_error_flag.cuh — device and host halves of the bad-value report. See device_error_flag.h.
#pragma once
#include <cstdint>

#include "cuda/device_error_flag.h"
#include "cuda/launch.h"

namespace rt::cuda_kernels {

__device__ __forceinline__ void report_bad_value(long long* flag, int64_t value) {
  if (atomicCAS(reinterpret_cast<unsigned long long*>(flag), 0ull, 1ull) == 0ull) flag[1] = value;
}

inline void clear_error_flag(void* flag, cudaStream_t stream, const char* op) {
  check_cuda(cudaMemsetAsync(flag, 0, kDeviceErrorFlagBytes, stream), op);
}

// True (and the bad value) when a kernel reported one; waits for the stream.
inline bool read_error_flag(const void* flag, cudaStream_t stream, const char* op, int64_t& value) {
  long long host[2] = {0, 0};
  check_cuda(cudaMemcpyAsync(host, flag, kDeviceErrorFlagBytes, cudaMemcpyDeviceToHost, stream), op);
  check_cuda(cudaStreamSynchronize(stream), op);
  value = host[1];
  return host[0] != 0;
}

}  // namespace rt::cuda_kernels
