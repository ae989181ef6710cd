// kernels/cuda_emulator/device.h — what CUDA device code needs to compile as C++ and run on the CPU.
// Force-included (`-include cuda_emulator/device.h`) into every kernels/cuda/*.cu that the build with
// -DRT_CUDA=EMULATED compiles as C++ (`-x c++`). Kernel sources launch and declare shared memory through
// kernels/cuda/kernel_macros.cuh, whose emulated forms call what this header declares:
//
//   RT_LAUNCH(rows, 256, stream, softmax_kernel<T, 4>)(x, y, n);                          // the .cu file
//   ::rt::cuda_emulator::Launch("softmax_kernel<T, 4>", ::rt::cuda_emulator::config(rows, 256, 0, stream),
//                               nullptr, [&](auto&... a) { softmax_kernel<T, 4>(a...); })(x, y, n);  // g++ sees
//
// A launch runs every block of the grid, one after another, on the calling thread; a block's
// threads are fibers that switch only at __syncthreads, __syncwarp and warp shuffles, one warp
// running ahead of the others between block barriers (block_runner.cpp, Note [Rounds]). So a
// thread that reads shared memory another thread writes without a barrier between sees it
// unwritten, as a GPU may. Shared variables (RT_SHARED: static_shared below)
// and dynamic shared memory start as 0xff bytes in every block. What the GPU would have undefined,
// the emulator reports and fails the launch with cudaErrorLaunchFailure: a shuffle or __syncwarp
// whose mask names a lane that has exited or waits elsewhere, a __syncthreads some threads never
// reach (deadlock), a shuffle reading a lane outside its mask or with a width that is not a power
// of two up to 32, a block larger than the kernel's __launch_bounds__.
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
// Kernel sources say RT_SHARED, RT_DYNAMIC_SHARED and RT_LAUNCH_BOUNDS (kernel_macros.cuh); CUDA's own
// spelling is a compile error here, never a silently per-thread array or an unchecked bound (and a
// `<<<` launch does not parse: use RT_LAUNCH).
#undef __shared__
#define __shared__ RT_CUDA_EMULATOR_USE_RT_SHARED_FROM_KERNEL_MACROS_CUH
#define __launch_bounds__(...) RT_CUDA_EMULATOR_USE_RT_LAUNCH_BOUNDS_FROM_KERNEL_MACROS_CUH

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

// The launch's dynamic shared memory (extern __shared__ arrays), 128-byte aligned.
void* dynamic_shared_memory();

// Bumped by the block runner as each block starts (never 0 inside a kernel).
extern thread_local uint64_t t_block_serial;

// A shared variable: `RT_SHARED(s, float[32]);` becomes
//   struct rt_shared_site_N {}; auto& s = static_shared<float[32], rt_shared_site_N>();
// (N: __COUNTER__). The site is a class local to the kernel, a distinct
// type in each of its instantiations, so there is one variable per declaration, instantiation and
// host thread, filled with 0xff bytes (NaN floats, -1 integers) when a block first touches it: a
// read before any write in the block shows.
template <typename T, typename Site>
T& static_shared() {
  alignas(alignof(T) > 16 ? alignof(T) : 16) thread_local unsigned char storage[sizeof(T)];
  thread_local uint64_t filled_for_block = 0;
  if (filled_for_block != t_block_serial) {
    std::memset(storage, 0xff, sizeof(T));
    filled_for_block = t_block_serial;
  }
  return *reinterpret_cast<T*>(storage);
}

// RT_CHECK_LAUNCH_BOUNDS(max_threads), at the top of the kernel's body: a block with more threads
// fails the launch (on a GPU it would not start).
void check_launch_bounds(unsigned max_threads);

// The address cudaFuncSetAttribute knows a kernel by: a kernel's name or a pointer variable.
template <typename F>
const void* kernel_key(F* kernel) {
  return reinterpret_cast<const void*>(kernel);
}

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

// `kernel` identifies the kernel for cudaFuncSetAttribute's dynamic shared memory limit:
// RT_LAUNCH_WITH_SHARED passes it, RT_LAUNCH nullptr.
template <typename Call, typename... Args>
void launch(const char* kernel_name, const LaunchConfig& config, const void* kernel, Call call, Args&&... args) {
  KernelCall<Call, Args...> c{call, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
  const cudaError_t e = run_grid(kernel_name, kernel, config, &KernelCall<Call, Args...>::run, &c);
  if (e != cudaSuccess) set_last_error(e);
}

// What RT_LAUNCH(...) makes: the launch, waiting for its arguments.
template <typename Call>
struct Launch {
  const char* kernel_name;
  LaunchConfig config;
  const void* kernel;
  Call call;
  template <typename... Args>
  void operator()(Args&&... args) const {
    launch(kernel_name, config, kernel, call, std::forward<Args>(args)...);
  }
};
template <typename Call>
Launch(const char*, LaunchConfig, const void*, Call) -> Launch<Call>;

// Barriers and shuffles (block_runner.cpp). A shuffle publishes `value` (at most 16 bytes) and
// blocks until every lane of `mask` has arrived; `result` then holds the value of lane `source`
// (kBadShuffleWidth fails the launch).
void sync_threads();
void sync_warp(unsigned mask);
void shuffle(unsigned mask, const void* value, size_t bytes, int source, void* result);

inline constexpr int kBadShuffleWidth = -1;

template <typename T>
T shuffle_value(unsigned mask, T value, int source) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>, "shuffles move at most 16 trivially copyable bytes");
  T result;
  shuffle(mask, &value, sizeof(T), source, &result);
  return result;
}

enum class ShuffleMode { Index, Up, Down, Xor };

// The lane whose value `lane` receives, by PTX's shfl.sync rules (CUDA's __shfl_*_sync pass
// c = ((32 - width) << 8) | clamp, clamp 0 for up and 31 otherwise): `b` counts modulo 32, a source
// past the segment's end (or before its start, for up) is the lane itself, and xor may reach an
// earlier segment. kBadShuffleWidth for a width that is not a power of two from 1 to 32.
inline int shuffle_source(ShuffleMode mode, int lane, int b, int width) {
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) return kBadShuffleWidth;
  const int segment_bits = 32 - width;
  const int clamp = mode == ShuffleMode::Up ? 0 : 31;
  const int max_lane = (lane & segment_bits) | (clamp & ~segment_bits);
  const int min_lane = lane & segment_bits;
  const int bval = b & 31;
  switch (mode) {
    case ShuffleMode::Up: return lane - bval >= max_lane ? lane - bval : lane;
    case ShuffleMode::Down: return lane + bval <= max_lane ? lane + bval : lane;
    case ShuffleMode::Xor: return (lane ^ bval) <= max_lane ? lane ^ bval : lane;
    case ShuffleMode::Index: break;
  }
  const int j = min_lane | (bval & ~segment_bits);
  return j <= max_lane ? j : lane;
}

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
  using namespace ::rt::cuda_emulator;
  return shuffle_value(mask, value, shuffle_source(ShuffleMode::Index, t_position->lane, index, width));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T value, int lane_mask, int width = 32) {
  using namespace ::rt::cuda_emulator;
  return shuffle_value(mask, value, shuffle_source(ShuffleMode::Xor, t_position->lane, lane_mask, width));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  using namespace ::rt::cuda_emulator;
  return shuffle_value(mask, value, shuffle_source(ShuffleMode::Down, t_position->lane, int(delta), width));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T value, unsigned delta, int width = 32) {
  using namespace ::rt::cuda_emulator;
  return shuffle_value(mask, value, shuffle_source(ShuffleMode::Up, t_position->lane, int(delta), width));
}

// CUDA's atomics, with CUDA's overloads (so a call CUDA would not compile does not compile here);
// atomic on the host too, since two host threads may run kernels on the same memory.
namespace rt::cuda_emulator {
template <typename T>
T atomic_add(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
template <typename T>
T atomic_cas(T* address, T compare, T value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;  // the old value either way
}
template <typename T>
T atomic_max(T* address, T value) {
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (old < value && !a.compare_exchange_weak(old, value)) {
  }
  return old;
}
}  // namespace rt::cuda_emulator

inline int atomicAdd(int* p, int v) { return ::rt::cuda_emulator::atomic_add(p, v); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return ::rt::cuda_emulator::atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
  return ::rt::cuda_emulator::atomic_add(p, v);
}
inline float atomicAdd(float* p, float v) { return ::rt::cuda_emulator::atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return ::rt::cuda_emulator::atomic_add(p, v); }
inline int atomicCAS(int* p, int compare, int v) { return ::rt::cuda_emulator::atomic_cas(p, compare, v); }
inline unsigned atomicCAS(unsigned* p, unsigned compare, unsigned v) {
  return ::rt::cuda_emulator::atomic_cas(p, compare, v);
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long compare, unsigned long long v) {
  return ::rt::cuda_emulator::atomic_cas(p, compare, v);
}
inline unsigned short atomicCAS(unsigned short* p, unsigned short compare, unsigned short v) {
  return ::rt::cuda_emulator::atomic_cas(p, compare, v);
}
inline int atomicMax(int* p, int v) { return ::rt::cuda_emulator::atomic_max(p, v); }
inline unsigned atomicMax(unsigned* p, unsigned v) { return ::rt::cuda_emulator::atomic_max(p, v); }
inline long long atomicMax(long long* p, long long v) { return ::rt::cuda_emulator::atomic_max(p, v); }
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
  return ::rt::cuda_emulator::atomic_max(p, v);
}

// Round-to-nearest arithmetic: what the host's IEEE operations do when nothing contracts them into
// an FMA. The emulated build compiles with -ffp-contract=off, where nvcc fuses a * b + c into an FMA
// by default: the emulator rounds like the CPU engine, not like the GPU, and cannot show where the
// GPU's rounding differs (the op check's tolerances cover that).
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

// CUDA's min and max of any two arithmetic types (device code calls them unqualified): the usual
// arithmetic conversions, and for floating point fmin/fmax, which return the other operand of a NaN.
template <typename A, typename B>
constexpr std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmin(C(a), C(b));
  else return C(b) < C(a) ? C(b) : C(a);
}
template <typename A, typename B>
constexpr std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmax(C(a), C(b));
  else return C(a) < C(b) ? C(b) : C(a);
}

// cuda_runtime.h declares its typed overload only for nvcc (__CUDACC__).
template <typename T>
cudaError_t cudaFuncSetAttribute(T* kernel, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), attr, value);
}
