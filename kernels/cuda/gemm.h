// kernels/cuda/gemm.h — row-major matrix products on CUDA through cuBLAS.
//
//   // c[M, N] = alpha * op(a) @ op(b) + beta * c, every matrix row-major as the engine stores it
//   rt::cuda_kernels::gemm(c, a, b, /*trans_a=*/false, /*trans_b=*/true, 1.0, 0.0, stream);
//   rt::cuda_kernels::gemm_batched(c3, a3, b3, false, false, 1.0, 0.0, stream);   // [B, M, N] = [B, M, K] @ [B, K, N]
//   rt::cuda_kernels::set_allow_tf32(true);   // float32 products may use TF32 tensor cores
//
// Operands: 2-D (gemm) or 3-D (gemm_batched) TensorArgs of one dtype: float32, float64, float16
// or bfloat16 (the half types multiply with float accumulation and float alpha/beta). `a` and
// `b` may be transposed views (a unit stride in either of the two matrix dims), which become
// cuBLAS transpose flags instead of copies; `c` must have a unit last stride. In gemm_batched
// the batch stride of `a` or `b` may be 0 (one matrix broadcast over the batch). With beta == 0
// `c` is write-only (NaNs already in it do not propagate).
//
// Note [Row-major through cuBLAS]
// cuBLAS is column-major. A row-major M x N matrix with leading dimension ld is, read column-
// major, its N x M transpose with the same ld. So C = op(A) op(B) in row-major is computed as
// C^T = op(B)^T op(A)^T in column-major: call cuBLAS with the operands swapped (B first), the
// sizes (N, M, K), each operand's own transpose flag and leading dimension, and ldc = C's row
// stride. No data moves.
//
// Note [TF32]
// set_allow_tf32 is process-wide and OFF by default (PyTorch's torch.backends.cuda.matmul.
// allow_tf32 default): float32 products then use CUBLAS_COMPUTE_32F, full float precision.
// When ON they use CUBLAS_COMPUTE_32F_FAST_TF32 (10-bit mantissa inputs, float accumulation),
// several times faster on tensor cores, about 1e-3 relative error.
//
// Handles: one cuBLAS handle per (thread, device), created on first use and cached; each call
// binds it to `stream`. cuBLAS uses its default per-handle workspace. Every cublasStatus_t is
// checked; failures throw rt::Error naming the call, the status and the sizes.
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void set_allow_tf32(bool allow);
bool allow_tf32();

// Called once when cudaMalloc of a stream's cuBLAS workspace runs out of memory, before the one
// retry: the engine registers its caching allocator's empty_cache (engine/src/cuda/runtime.cpp), so
// blocks it holds free can serve the workspace. None by default.
void set_release_cached_memory(void (*release)());

void gemm(const TensorArg& c, const TensorArg& a, const TensorArg& b, bool trans_a, bool trans_b, double alpha,
          double beta, cudaStream_t stream);
void gemm_batched(const TensorArg& c, const TensorArg& a, const TensorArg& b, bool trans_a, bool trans_b,
                  double alpha, double beta, cudaStream_t stream);

}  // namespace rt::cuda_kernels
