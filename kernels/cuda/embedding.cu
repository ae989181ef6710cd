// embedding forward (gather) and backward (scatter-add). See kernels/cuda/embedding.h.
#include <string>
#include <type_traits>

#include "cuda/device_error_flag.cuh"
#include "cuda/embedding.h"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

// Copies rows in units of U (16, 8, 4, 2 or 1 bytes, the widest that divides the row and aligns).
template <typename U>
__global__ void embedding_gather_kernel(const U* __restrict__ w, const int64_t* __restrict__ idx, U* __restrict__ out,
                                        int64_t n, int64_t units_per_row, int64_t V, long long* flag) {
  const int64_t total = n * units_per_row;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / units_per_row, u = e % units_per_row;
    const int64_t row = idx[i];
    if (row < 0 || row >= V) {
      if (u == 0) report_bad_value(flag, row);
      continue;
    }
    out[e] = w[row * units_per_row + u];
  }
}

template <typename T, typename S>
__global__ void embedding_scatter_kernel(const T* __restrict__ g, const int64_t* __restrict__ idx, S* __restrict__ acc,
                                         int64_t n, int64_t D, int64_t V, int64_t padding_idx) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * D; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / D;
    const int64_t row = idx[i];
    if (row == padding_idx || row < 0 || row >= V) continue;  // the forward already rejected out-of-range rows
    atomicAdd(&acc[row * D + e % D], S(to_acc(g[e])));
  }
}

template <typename T>
__global__ void round_from_float_kernel(const float* __restrict__ src, T* __restrict__ dst, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    dst[e] = from_acc<T>(src[e]);
}

void check_indices(const TensorArg& indices, const char* op) {
  require_contiguous(indices, op, "indices");
  if (indices.dtype != kInt64)
    throw DTypeError(std::string(op) + " on CUDA: indices must be int64, got " + std::string(dtype_name(indices.dtype)) +
                     "; convert with indices.to(rt::kInt64)");
}

void check_table(const TensorArg& t, const char* op, const char* name) {
  if (t.ndim != 2)
    throw ShapeError(std::string(op) + " on CUDA: " + name + " must be 2-D [num_embeddings, embedding_dim], got " +
                     std::to_string(t.ndim) + "-D");
  require_contiguous(t, op, name);
}

template <typename U>
void launch_gather(const TensorArg& out, const TensorArg& weight, const TensorArg& indices, int64_t row_bytes,
                   long long* flag, cudaStream_t stream) {
  const int64_t n = indices.numel(), units = row_bytes / int64_t(sizeof(U));
  RT_LAUNCH(grid_for(n * units), kBlock, stream, embedding_gather_kernel<U>)(
      static_cast<const U*>(weight.data), static_cast<const int64_t*>(indices.data), static_cast<U*>(out.data), n,
      units, weight.sizes[0], flag);
}

bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

}  // namespace

void embedding_forward(const TensorArg& out, const TensorArg& weight, const TensorArg& indices, void* flag_scratch,
                       cudaStream_t stream) {
  const char* op = "embedding";
  check_table(weight, op, "weight");
  check_indices(indices, op);
  require_contiguous(out, op, "output");
  require_dtype(out, weight.dtype, op, "output");
  const int64_t n = indices.numel(), V = weight.sizes[0], D = weight.sizes[1];
  if (out.numel() != n * D)
    throw ShapeError("embedding on CUDA: output must hold " + std::to_string(n) + " rows of " + std::to_string(D));
  if (n == 0 || D == 0) return;
  if (!flag_scratch) throw ValueError("embedding on CUDA: flag_scratch (kDeviceErrorFlagBytes) is required");
  long long* flag = static_cast<long long*>(flag_scratch);
  clear_error_flag(flag, stream, op);
  const int64_t row_bytes = D * int64_t(element_size(weight.dtype));
  auto fits = [&](size_t a) { return row_bytes % int64_t(a) == 0 && aligned(weight.data, a) && aligned(out.data, a); };
  if (fits(16)) launch_gather<uint4>(out, weight, indices, row_bytes, flag, stream);
  else if (fits(8)) launch_gather<uint2>(out, weight, indices, row_bytes, flag, stream);
  else if (fits(4)) launch_gather<uint32_t>(out, weight, indices, row_bytes, flag, stream);
  else if (fits(2)) launch_gather<uint16_t>(out, weight, indices, row_bytes, flag, stream);
  else launch_gather<uint8_t>(out, weight, indices, row_bytes, flag, stream);
  check_launch(op);
  int64_t bad = 0;
  if (read_error_flag(flag, stream, op, bad))
    throw IndexError("embedding: index " + std::to_string(bad) + " is out of range for num_embeddings " +
                     std::to_string(V) + " (valid: 0.." + std::to_string(V - 1) + ")");
}

size_t embedding_backward_scratch_bytes(const TensorArg& grad_weight) {
  const bool half = grad_weight.dtype == kFloat16 || grad_weight.dtype == kBFloat16;
  return half ? size_t(grad_weight.numel()) * sizeof(float) : 0;
}

void embedding_backward(const TensorArg& grad_weight, const TensorArg& grad_out, const TensorArg& indices,
                        int64_t padding_idx, void* scratch, cudaStream_t stream) {
  const char* op = "embedding_backward";
  check_table(grad_weight, op, "grad_weight");
  check_indices(indices, op);
  require_contiguous(grad_out, op, "grad_output");
  require_dtype(grad_out, grad_weight.dtype, op, "grad_output");
  const int64_t n = indices.numel(), D = grad_weight.sizes[1], VD = grad_weight.numel();
  if (grad_out.numel() != n * D)
    throw ShapeError("embedding_backward on CUDA: grad_output must hold " + std::to_string(n) + " rows of " +
                     std::to_string(D));
  visit_floating(grad_weight.dtype, op, [&]<typename T>() {
    constexpr bool kHalf = !std::is_same_v<T, float> && !std::is_same_v<T, double>;
    using S = std::conditional_t<kHalf, float, T>;
    S* acc = kHalf ? static_cast<S*>(scratch) : static_cast<S*>(grad_weight.data);
    if (kHalf && !scratch && VD > 0)
      throw ValueError("embedding_backward on CUDA: half-precision grads need embedding_backward_scratch_bytes() of scratch");
    if (VD == 0) return;
    check_cuda(cudaMemsetAsync(acc, 0, size_t(VD) * sizeof(S), stream), op);
    if (n * D > 0) {
      RT_LAUNCH(grid_for(n * D), kBlock, stream, embedding_scatter_kernel<T, S>)(
          static_cast<const T*>(grad_out.data), static_cast<const int64_t*>(indices.data), acc, n, D, grad_weight.sizes[0], padding_idx);
      check_launch(op);
    }
    if constexpr (kHalf) {
      RT_LAUNCH(grid_for(VD), kBlock, stream, round_from_float_kernel<T>)(acc, static_cast<T*>(grad_weight.data), VD);
      check_launch("embedding_backward (round)");
    }
  });
}

}  // namespace rt::cuda_kernels
