// rt/plugin/cuda_launch.h — launching a plugin's CUDA kernel so that one .cu file builds with nvcc (a GPU
// build) and as C++ for RustyTorch++'s CUDA emulator (RT_CUDA=EMULATED: the build force-includes the
// emulator's device header, and RT_CUDA_EMULATION is defined). Includes nothing.
//
//   template <typename T>
//   __global__ void scale_kernel(const T* x, T* y, int64_t n, T s) {
//     for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x)
//       y[i] = s * x[i];
//   }
//   RT_PLUGIN_LAUNCH(blocks, 256, stream, scale_kernel<float>)(x, y, n, 2.f);   // scale_kernel<<<...>>>(...)
//   if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
//
// Kernels use no __shared__ memory or __launch_bounds__ through this header (the emulator needs its own macros
// for those); a grid-stride loop over global memory, as above, is what it is for. The stream is the one the host
// passed in RtOpCall.cuda_stream (cast to cudaStream_t).
#pragma once

#if defined(RT_CUDA_EMULATION)
#define RT_PLUGIN_LAUNCH(grid, block, stream, ...)                                                               \
  ::rt::cuda_emulator::Launch(#__VA_ARGS__, ::rt::cuda_emulator::config((grid), (block), 0, (stream)), nullptr, \
                              [&](auto&... rt_plugin_args_) { __VA_ARGS__(rt_plugin_args_...); })
#else
#define RT_PLUGIN_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<(grid), (block), 0, (stream)>>>
#endif
