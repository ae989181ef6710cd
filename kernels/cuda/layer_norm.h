// kernels/cuda/layer_norm.h — layer_norm forward and backward on CUDA.
//
//   // x [M, D] (any shape whose trailing dims multiply to D), mean/rstd float64 [M]
//   rt::cuda_kernels::layer_norm_forward(y, mean, rstd, x, weight, bias, D, 1e-5, stream);
//   size_t bytes = rt::cuda_kernels::layer_norm_backward_scratch_bytes(x.dtype, M, D);
//   rt::cuda_kernels::layer_norm_backward(gx, gw, gb, gy, x, weight, mean, rstd, D, scratch, stream);
//
// Semantics of engine/src/ops/norm.cpp: per row, mean and biased variance accumulated in float
// (double for float64), rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * w + b; mean and rstd
// are saved as float64. Backward: dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with
// gw = g * w, dw = sum over rows of g * xhat, db = sum of g.
// x, y, g, gx share one floating dtype and are contiguous. An optional argument (weight, bias,
// gx, gw, gb) is absent when its data is null. gw and gb may have any floating dtype (the
// parameter's own). The parameter grads are reduced deterministically: fixed chunks of rows
// write partial sums into the caller's scratch, a second pass adds them in chunk order.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void layer_norm_forward(const TensorArg& out, const TensorArg& mean, const TensorArg& rstd, const TensorArg& x,
                        const TensorArg& weight, const TensorArg& bias, int64_t D, double eps, cudaStream_t stream);

// Device scratch layer_norm_backward needs for weight/bias grads (0 when neither is wanted is fine too).
size_t layer_norm_backward_scratch_bytes(ScalarType dtype, int64_t M, int64_t D);

void layer_norm_backward(const TensorArg& grad_input, const TensorArg& grad_weight, const TensorArg& grad_bias,
                         const TensorArg& grad_out, const TensorArg& x, const TensorArg& weight, const TensorArg& mean,
                         const TensorArg& rstd, int64_t D, void* scratch, cudaStream_t stream);

}  // namespace rt::cuda_kernels
