// kernels/cuda/kernel_macros.cuh — how a kernel source launches kernels and declares shared memory,
// written once for nvcc and for the CUDA emulator (kernels/cuda_emulator/device.h). Every .cu and
// .cuh in kernels/cuda uses these instead of CUDA's own syntax, which the emulated build refuses:
//
//   RT_LAUNCH(grid_for(n), kBlock, stream, scale_kernel<T>)(out, in, n);        // k<<<g, b, 0, s>>>(...)
//   RT_LAUNCH_WITH_SHARED(rows, threads, bytes, stream, row_kernel<T, 4>)(x, y);  // k<<<g, b, bytes, s>>>(...)
//
//   template <typename A>
//   __global__ void RT_LAUNCH_BOUNDS(256) row_kernel(const A* x, A* y) {        // __launch_bounds__(256)
//     RT_CHECK_LAUNCH_BOUNDS(256);                   // the emulator's check (nvcc: nothing)
//     RT_SHARED(partial, A[32]);                     // __shared__ A partial[32];
//     RT_SHARED(tile, A[8][33]);                     // __shared__ A tile[8][33];
//     RT_DYNAMIC_SHARED(buffer, unsigned char);      // extern __shared__ __align__(16) unsigned char buffer[];
//     ...
//   }
//
// The kernel goes last in a launch, so template arguments with commas need no parentheses; the
// launch's configuration expressions must have none outside parentheses. A launch asking for dynamic
// shared memory uses RT_LAUNCH_WITH_SHARED, whose kernel must be a single function (no deduced
// template arguments): cudaFuncSetAttribute's limit is looked up by its address. A kernel with
// RT_LAUNCH_BOUNDS(n) states n again in RT_CHECK_LAUNCH_BOUNDS(n) as its first statement (name it
// with a constexpr function when it is an expression), so the emulator fails a larger block as a
// GPU refuses to start it.
#pragma once

#define RT_KERNEL_CONCAT_INNER_(a, b) a##b
#define RT_KERNEL_CONCAT_(a, b) RT_KERNEL_CONCAT_INNER_(a, b)

#if defined(RT_CUDA_EMULATION)

#define RT_LAUNCH(grid, block, stream, ...)                                                            \
  ::rt::cuda_emulator::Launch(#__VA_ARGS__, ::rt::cuda_emulator::config((grid), (block), 0, (stream)), \
                              nullptr, [&](auto&... rt_args_) { __VA_ARGS__(rt_args_...); })
#define RT_LAUNCH_WITH_SHARED(grid, block, shared_bytes, stream, ...)                                          \
  ::rt::cuda_emulator::Launch(#__VA_ARGS__, ::rt::cuda_emulator::config((grid), (block), (shared_bytes), (stream)), \
                              ::rt::cuda_emulator::kernel_key(__VA_ARGS__),                                     \
                              [&](auto&... rt_args_) { __VA_ARGS__(rt_args_...); })
// One variable per declaration, kernel instantiation and block (device.h's static_shared); the site
// is a class local to the kernel, so each instantiation gets its own.
#define RT_SHARED(name, ...) RT_SHARED_AT_(RT_KERNEL_CONCAT_(rt_shared_site_, __COUNTER__), name, __VA_ARGS__)
#define RT_SHARED_AT_(site, name, ...) \
  struct site {};                      \
  auto& name = ::rt::cuda_emulator::static_shared<__VA_ARGS__, site>()
#define RT_DYNAMIC_SHARED(name, ...) \
  auto* name = static_cast<__VA_ARGS__*>(::rt::cuda_emulator::dynamic_shared_memory())
#define RT_LAUNCH_BOUNDS(...)
#define RT_CHECK_LAUNCH_BOUNDS(max_threads) ::rt::cuda_emulator::check_launch_bounds(max_threads)

#else

namespace rt::cuda_kernels {
// `__shared__ SharedType<A[8][33]> tile;` declares what `__shared__ A tile[8][33];` does.
template <typename T>
using SharedType = T;
}  // namespace rt::cuda_kernels

#define RT_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<(grid), (block), 0, (stream)>>>
#define RT_LAUNCH_WITH_SHARED(grid, block, shared_bytes, stream, ...) \
  __VA_ARGS__<<<(grid), (block), (shared_bytes), (stream)>>>
#define RT_SHARED(name, ...) __shared__ ::rt::cuda_kernels::SharedType<__VA_ARGS__> name
#define RT_DYNAMIC_SHARED(name, ...) extern __shared__ __align__(16) __VA_ARGS__ name[]
#define RT_LAUNCH_BOUNDS(...) __launch_bounds__(__VA_ARGS__)
#define RT_CHECK_LAUNCH_BOUNDS(max_threads) static_cast<void>(0)

#endif
