// uniform_ / normal_ fills from the engine's Philox stream. See kernels/cuda/random_fill.h.
#include <string>
#include <type_traits>

#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/philox.cuh"
#include "cuda/random_fill.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

template <typename T>
__host__ __device__ constexpr int mantissa_digits() {
  if constexpr (std::is_same_v<T, __half>) return 11;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return 8;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else return 53;
}

template <typename T>
__host__ __device__ constexpr int per_counter() { return std::is_same_v<T, double> ? 2 : 4; }

// The CPU converts double -> compute type -> T; for the half types that is double -> float -> half.
template <typename T>
__device__ __forceinline__ T store_from_double(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return from_acc<T>(float(v));
}

// One thread per counter: it writes the counter's k values.
template <typename T>
__global__ void uniform_kernel(T* __restrict__ out, int64_t n, double low, double range, uint64_t seed,
                               uint64_t offset) {
  constexpr int per = per_counter<T>();
  const int64_t blocks = (n + per - 1) / per;
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < blocks; b += int64_t(gridDim.x) * blockDim.x) {
    const Philox4 w = philox_block(offset + uint64_t(b), seed);
#pragma unroll
    for (int k = 0; k < per; ++k)
      if (b * per + k < n) out[b * per + k] = store_from_double<T>(__dadd_rn(low, __dmul_rn(range, uniform_at(w, k, mantissa_digits<T>()))));
  }
}

// Box-Muller as random.cpp's fill_normal: float for the 16/32-bit types, double for float64.
template <typename T>
__global__ void normal_kernel(T* __restrict__ out, int64_t n, double mean, double stddev, uint64_t seed,
                              uint64_t offset) {
  constexpr int per = per_counter<T>();
  const int64_t blocks = (n + per - 1) / per;
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < blocks; b += int64_t(gridDim.x) * blockDim.x) {
    const Philox4 w = philox_block(offset + uint64_t(b), seed);
#pragma unroll
    for (int k = 0; k < per; k += 2) {
      const int64_t i = b * per + k;
      if constexpr (std::is_same_v<T, double>) {
        const double u = double((philox_word64(w, k) >> 11) + 1) * 0x1p-53;       // (0, 1]
        const double a = double(philox_word64(w, k + 1) >> 11) * 0x1p-53;         // [0, 1)
        const double r = sqrt(__dmul_rn(-2.0, log(u)));
        const double theta = __dmul_rn(2 * 3.14159265358979323846, a);
        if (i < n) out[i] = __dadd_rn(mean, __dmul_rn(__dmul_rn(stddev, r), cos(theta)));
        if (i + 1 < n) out[i + 1] = __dadd_rn(mean, __dmul_rn(__dmul_rn(stddev, r), sin(theta)));
      } else {
        const float u = float((double(w.v[k]) + 1.0) * 0x1p-32);
        const float a = float(double(w.v[k + 1]) * 0x1p-32);
        const float m = float(mean), s = float(stddev), two_pi = float(2 * 3.14159265358979323846);
        const float r = sqrtf(__fmul_rn(-2.0f, logf(u)));
        const float theta = __fmul_rn(two_pi, a);
        if (i < n) out[i] = from_acc<T>(__fadd_rn(m, __fmul_rn(__fmul_rn(s, r), cosf(theta))));
        if (i + 1 < n) out[i + 1] = from_acc<T>(__fadd_rn(m, __fmul_rn(__fmul_rn(s, r), sinf(theta))));
      }
    }
  }
}

template <typename F>
void visit_fill(const TensorArg& out, const char* op, F&& f) {
  require_contiguous(out, op, "output");
  visit_floating(out.dtype, op, std::forward<F>(f));
}

}  // namespace

uint64_t random_fill_counters(int64_t n, ScalarType dtype) {
  const int64_t per = dtype == kFloat64 ? 2 : 4;
  return n <= 0 ? 0 : uint64_t((n + per - 1) / per);
}

void fill_uniform(const TensorArg& out, double low, double high, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  visit_fill(out, "uniform_", [&]<typename T>() {
    const int64_t n = out.numel();
    if (n == 0) return;
    RT_LAUNCH(grid_for(int64_t(random_fill_counters(n, out.dtype))), kBlock, stream, uniform_kernel<T>)(
        static_cast<T*>(out.data), n, low, high - low, seed, offset);
    check_launch("uniform_");
  });
}

void fill_normal(const TensorArg& out, double mean, double stddev, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  visit_fill(out, "normal_", [&]<typename T>() {
    const int64_t n = out.numel();
    if (n == 0) return;
    RT_LAUNCH(grid_for(int64_t(random_fill_counters(n, out.dtype))), kBlock, stream, normal_kernel<T>)(
        static_cast<T*>(out.data), n, mean, stddev, seed, offset);
    check_launch("normal_");
  });
}

}  // namespace rt::cuda_kernels
