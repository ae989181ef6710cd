// kernels/cuda/launch.h — error checking and grid sizing shared by every CUDA launcher.
// Included only by kernels/cuda/*.cu and engine/src/cuda/*.cpp (files built when RT_CUDA is on).
//
//   RT_LAUNCH(grid_for(n), kBlock, stream, my_kernel)(...);   // kernel_macros.cuh
//   check_launch("add");                 // throws rt::Error naming the kernel and CUDA's error
//   check_cuda(cudaMemsetAsync(p, 0, n, stream), "zero_");
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "rt/error.h"

namespace rt::cuda_kernels {

inline constexpr int kBlock = 256;

// Blocks for n elements at kBlock threads each (a grid-stride loop covers what exceeds the cap).
inline unsigned grid_for(int64_t n, int block = kBlock) {
  const int64_t blocks = (n + block - 1) / block;
  return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 32 ? 65535 * 32 : blocks));
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* what) {
  throw Error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw_cuda_error(e, what);
}

// The answer of cudaStreamQuery / cudaEventQuery: true when the work is done, false while it is
// not (cudaErrorNotReady, cleared so no later check sees it); other errors throw.
inline bool completed(cudaError_t e, const char* what) {
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  check_cuda(e, what);
  return true;
}

// Call right after a launch (RT_LAUNCH): reports bad launch configurations at once.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace rt::cuda_kernels
