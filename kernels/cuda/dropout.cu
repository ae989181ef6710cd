// Inverted dropout with the CPU engine's Philox mask. See kernels/cuda/dropout.h.
#include <string>
#include <type_traits>

#include "cuda/dropout.h"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/philox.cuh"
#include "cuda/random_fill.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

// U is the uniforms' type (float, or double for a float64 input); one thread per Philox counter.
template <typename T, typename U>
__global__ void dropout_kernel(const T* __restrict__ x, T* __restrict__ out, bool* __restrict__ mask, int64_t n,
                               U threshold, acc_t<T> scale, uint64_t seed, uint64_t offset) {
  using C = acc_t<T>;
  constexpr int per = std::is_same_v<U, double> ? 2 : 4;
  constexpr int digits = std::is_same_v<U, double> ? 53 : 24;
  const int64_t blocks = (n + per - 1) / per;
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < blocks; b += int64_t(gridDim.x) * blockDim.x) {
    const Philox4 w = philox_block(offset + uint64_t(b), seed);
#pragma unroll
    for (int k = 0; k < per; ++k) {
      const int64_t i = b * per + k;
      if (i >= n) break;
      const bool keep = U(uniform_at(w, k, digits)) < threshold;
      mask[i] = keep;
      out[i] = from_acc<T>(to_acc(x[i]) * (keep ? scale : C(0)));
    }
  }
}

template <typename T>
__global__ void dropout_backward_kernel(const T* __restrict__ g, const bool* __restrict__ mask, T* __restrict__ gx,
                                        int64_t n, acc_t<T> scale) {
  using C = acc_t<T>;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    gx[i] = from_acc<T>(to_acc(g[i]) * (mask[i] ? scale : C(0)));
}

void check_like(const TensorArg& t, const TensorArg& ref, ScalarType dtype, const char* op, const char* name) {
  require_contiguous(t, op, name);
  require_dtype(t, dtype, op, name);
  if (t.numel() != ref.numel())
    throw ShapeError(std::string(op) + " on CUDA: " + name + " has " + std::to_string(t.numel()) +
                     " elements, expected " + std::to_string(ref.numel()));
}

}  // namespace

uint64_t dropout_counters(int64_t n, ScalarType dtype) {
  return random_fill_counters(n, dtype == kFloat64 ? kFloat64 : kFloat32);
}

void dropout_forward(const TensorArg& out, const TensorArg& mask, const TensorArg& x, double p, uint64_t seed,
                     uint64_t offset, cudaStream_t stream) {
  const char* op = "dropout";
  if (!(p > 0.0 && p < 1.0))
    throw ValueError("dropout on CUDA: the kernel needs 0 < p < 1, got " + std::to_string(p) +
                     " (p == 0, p == 1 and eval mode need no random mask)");
  require_contiguous(x, op, "input");
  check_like(out, x, x.dtype, op, "output");
  check_like(mask, x, kBool, op, "mask");
  const int64_t n = x.numel();
  if (n == 0) return;
  const double keep = 1.0 - p, scale = 1.0 / keep;
  visit_floating(x.dtype, op, [&]<typename T>() {
    using U = std::conditional_t<std::is_same_v<T, double>, double, float>;
    RT_LAUNCH(grid_for(int64_t(dropout_counters(n, x.dtype))), kBlock, stream, dropout_kernel<T, U>)(
        static_cast<const T*>(x.data), static_cast<T*>(out.data), static_cast<bool*>(mask.data), n, U(keep),
        acc_t<T>(scale), seed, offset);
    check_launch(op);
  });
}

void dropout_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& mask, double scale,
                      cudaStream_t stream) {
  const char* op = "dropout_backward";
  require_contiguous(grad_out, op, "grad_output");
  check_like(grad_input, grad_out, grad_out.dtype, op, "grad_input");
  check_like(mask, grad_out, kBool, op, "mask");
  const int64_t n = grad_out.numel();
  if (n == 0) return;
  visit_floating(grad_out.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(n), kBlock, stream, dropout_backward_kernel<T>)(static_cast<const T*>(grad_out.data),
                                                                   static_cast<const bool*>(mask.data),
                                                                   static_cast<T*>(grad_input.data), n, acc_t<T>(scale));
    check_launch(op);
  });
}

}  // namespace rt::cuda_kernels
