// kernels/cuda_emulator/emulator.h — what the emulator's two halves share: the CUDA runtime
// (runtime.cpp, cublas.cpp) and the kernel launcher (block_runner.cpp, device.h).
//
// The emulator runs the project's own CUDA kernels on the CPU so that CI, which has no GPU,
// executes them: `-DRT_CUDA=EMULATED` compiles kernels/cuda/*.cu as C++ (their RT_LAUNCH launches,
// kernels/cuda/kernel_macros.cuh, call rt::cuda_emulator::launch) and links the engine against
// this folder instead of libcudart and cuBLAS. Each block's threads run as fibers on the calling
// thread; work is done when the launch returns, so every stream is always idle.
//
//   rt::cuda_emulator::set_last_error(cudaErrorInvalidConfiguration);  // what cudaGetLastError returns next
//   size_t cap = rt::cuda_emulator::max_dynamic_shared_bytes(fn);        // 48 KiB unless cudaFuncSetAttribute raised it
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rt::cuda_emulator {

// The error cudaGetLastError / cudaPeekAtLastError report next (cudaSuccess is ignored, as the
// runtime never clears an error by succeeding). Every failing runtime call and launch sets it.
void set_last_error(cudaError_t e);

// The device cudaSetDevice made current on this thread (0 at first).
int current_device();

// cudaSuccess for a stream a launch may use (a default stream or a live created one), else
// cudaErrorInvalidResourceHandle, as a launch on a destroyed stream fails on a GPU.
cudaError_t check_launch_stream(cudaStream_t stream);

// Dynamic shared memory a launch of `kernel` may ask for: 48 KiB, or the
// cudaFuncAttributeMaxDynamicSharedMemorySize set for it (at most kMaxSharedBytesOptin).
size_t max_dynamic_shared_bytes(const void* kernel);

// The emulated device's limits, those of an H100/H200 (sm_90).
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr size_t kDefaultSharedBytes = 48 * 1024;
inline constexpr size_t kMaxSharedBytesOptin = 227 * 1024;
inline constexpr int kMultiprocessors = 132;

}  // namespace rt::cuda_emulator
