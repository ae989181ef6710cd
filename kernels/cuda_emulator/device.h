// kernels/cuda_emulator/device.h — what CUDA device code needs to compile as C++ and run on the CPU.
// Force-included (`-include cuda_emulator/device.h`) into every kernels/cuda/*.cu that the build with
// -DRT_CUDA=EMULATED compiles as C++, after translate_launches.py has rewritten its launches:
//
//   softmax_kernel<T, 4><<<rows, 256, 0, stream>>>(x, y, n);                              // the .cu file
//   ::rt::cuda_emulator::launch("softmax_kernel<T, 4>", ::rt::cuda_emulator::config(rows, 256, 0, stream),
//                               nullptr, [&](auto&... a) { softmax_kernel<T, 4>(a...); }, x, y, n);  // what g++ compiles
//
// A launch runs every block of the grid, one after another, on the calling thread; a block's
// threads are fibers that switch only at __syncthreads and warp shuffles (block_runner.cpp), so
// a thread that reads shared memory another thread writes without a barrier between sees it
// unwritten, as a GPU may. What the GPU would have undefined, the emulator reports and fails the
// launch with cudaErrorLaunchFailure: a shuffle or __syncwarp whose mask names a lane that has
// exited or waits elsewhere, a __syncthreads some threads never reach (deadlock), a shuffle
// reading a lane outside its mask. __shared__ variables are static thread_local: one copy per
// host thread, which runs one block at a time.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda_emulator/emulator.h"

#define RT_CUDA_EMULATION 1

// Host compilers see __global__, __device__, __host__ and __shared__ as empty (crt/host_defines.h).
#undef __shared__
#define __shared__ static thread_local
#define __launch_bounds__(...)

namespace rt::cuda_emulator {

// Where a fiber is: its indices, and the block it belongs to.
struct ThreadPosition {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
  int lane;  // linear thread index % 32
};

// The running fiber's position; set by the block runner before it switches to a fiber.
extern thread_local const ThreadPosition* t_position;

struct LaunchConfig {
  dim3 grid;
  dim3 block;
  size_t shared_bytes = 0;
  cudaStream_t stream = nullptr;
};

template <typename G, typename B>
LaunchConfig config(G grid, B block, size_t shared_bytes = 0, cudaStream_t stream = nullptr) {
  return LaunchConfig{dim3(grid), dim3(block), shared_bytes, stream};
}

// Runs body(context) once per thread of every block of the grid (block_runner.cpp). Returns
// cudaSuccess, the configuration error CUDA reports at launch, or cudaErrorLaunchFailure after
// printing to stderr what the kernel did that a GPU leaves undefined.
cudaError_t run_grid(const char* kernel_name, const void* kernel, const LaunchConfig& config,
                     void (*body)(void* context), void* context);

// The launch's dynamic shared memory (extern __shared__ arrays), 16-byte aligned.
void* dynamic_shared_memory();

// A launch's arguments, copied once (as CUDA copies them into the kernel's parameter space); each
// thread calls the kernel with them, converted to its parameters then. `call` is a generic lambda
// that names the kernel, so kernels whose last template arguments are deduced work too.
template <typename Call, typename... Args>
struct KernelCall {
  Call call;
  std::tuple<std::decay_t<Args>...> args;
  static void run(void* self) {
    auto* c = static_cast<KernelCall*>(self);
    std::apply(c->call, c->args);
  }
};

// `kernel` identifies the kernel for cudaFuncSetAttribute's dynamic shared memory limit; the
// translation passes it for launches that ask for dynamic shared memory, nullptr otherwise.
template <typename Call, typename... Args>
void launch(const char* kernel_name, const LaunchConfig& config, const void* kernel, Call call, Args&&... args) {
  KernelCall<Call, Args...> c{call, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
  const cudaError_t e = run_grid(kernel_name, kernel, config, &KernelCall<Call, Args...>::run, &c);
  if (e != cudaSuccess) set_last_error(e);
}

// Barriers and shuffles (block_runner.cpp). A shuffle publishes `value` (at most 16 bytes) and
// blocks until every lane of `mask` has arrived; `result` then holds the value of lane `source`.
void sync_threads();
void sync_warp(unsigned mask);
void shuffle(unsigned mask, const void* value, size_t bytes, int source, void* result);

template <typename T>
T shuffle_value(unsigned mask, T value, int source) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>, "shuffles move at most 16 trivially copyable bytes");
  T result;
  shuffle(mask, &value, sizeof(T), source, &result);
  return result;
}

// The lane a shuffle reads, or -1 for "keep your own value" (a source outside the segment).
inline int shuffle_source_xor(int lane, int lane_mask, int width) {
  const int source = lane ^ lane_mask;
  return source / width == lane / width ? source : -1;
}
inline int shuffle_source_down(int lane, unsigned delta, int width) {
  const int source = lane + int(delta);
  return source / width == lane / width ? source : -1;
}
inline int shuffle_source_up(int lane, unsigned delta, int width) {
  const int source = lane - int(delta);
  return source >= 0 && source / width == lane / width ? source : -1;
}
inline int shuffle_source_index(int lane, int index, int width) { return (lane / width) * width + index % width; }

}  // namespace rt::cuda_emulator

#define threadIdx (::rt::cuda_emulator::t_position->thread_idx)
#define blockIdx (::rt::cuda_emulator::t_position->block_idx)
#define blockDim (::rt::cuda_emulator::t_position->block_dim)
#define gridDim (::rt::cuda_emulator::t_position->grid_dim)

inline constexpr int warpSize = 32;

inline void __syncthreads() { ::rt::cuda_emulator::sync_threads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::rt::cuda_emulator::sync_warp(mask); }

template <typename T>
T __shfl_sync(unsigned mask, T value, int index, int width = 32) {
  const int lane = ::rt::cuda_emulator::t_position->lane;
  return ::rt::cuda_emulator::shuffle_value(mask, value, ::rt::cuda_emulator::shuffle_source_index(lane, index, width));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  const int lane = ::rt::cuda_emulator::t_position->lane;
  return ::rt::cuda_emulator::shuffle_value(mask, value, ::rt::cuda_emulator::shuffle_source_xor(lane, lane_mask, width));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  const int lane = ::rt::cuda_emulator::t_position->lane;
  return ::rt::cuda_emulator::shuffle_value(mask, value, ::rt::cuda_emulator::shuffle_source_down(lane, delta, width));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  const int lane = ::rt::cuda_emulator::t_position->lane;
  return ::rt::cuda_emulator::shuffle_value(mask, value, ::rt::cuda_emulator::shuffle_source_up(lane, delta, width));
}

// Atomics: atomic on the host too, since two host threads may run kernels on the same memory.
template <typename T>
T atomicAdd(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
template <typename T>
T atomicCAS(T* address, T compare, T value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;  // the old value either way
}
template <typename T>
T atomicMax(T* address, T value) {
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (old < value && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}

// Round-to-nearest arithmetic: what the host's IEEE operations do when nothing contracts them into
// an FMA (the emulated build compiles with -ffp-contract=off).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((uint64_t(a) * b) >> 32); }

// CUDA's min and max of any two arithmetic types (device code calls them unqualified).
template <typename A, typename B>
constexpr std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(b) < C(a) ? C(b) : C(a);
}
template <typename A, typename B>
constexpr std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return C(a) < C(b) ? C(b) : C(a);
}

// cuda_runtime.h declares its typed overload only for nvcc (__CUDACC__).
template <typename T>
cudaError_t cudaFuncSetAttribute(T* kernel, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
