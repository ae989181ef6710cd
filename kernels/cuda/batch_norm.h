// kernels/cuda/batch_norm.h — batch_norm over [N, C, *] (NCHW contiguous) on CUDA.
//
//   // training: batch statistics, running stats updated in place (PyTorch's momentum rule)
//   rt::cuda_kernels::batch_norm_forward(y, save_mean, save_invstd, x, w, b, running_mean, running_var,
//                                        /*training=*/true, 0.1, 1e-5, stream);
//   rt::cuda_kernels::batch_norm_backward(gx, gw, gb, gy, x, w, save_mean, save_invstd, true, stream);
//
// Semantics of engine/src/ops/norm.cpp: training uses per-channel mean and biased variance over
// (N, *) accumulated in float (double for float64), invstd = 1 / sqrt(var + eps) in double,
// y = x * (invstd * w) + (b - mean * invstd * w); running_mean = (1 - m) * running_mean + m * mean,
// running_var = (1 - m) * running_var + m * var * count / (count - 1) (unbiased), in double.
// Eval uses the running stats and leaves them alone. save_mean / save_invstd (float64 [C]) get
// the statistics used in either mode, for the backward:
//   training: dx = w * invstd * (g - mean(g) - xhat * mean(g * xhat)); eval: dx = g * w * invstd;
//   dw = sum(g * xhat), db = sum(g) over (N, *).
// Optional tensors (weight, bias, running stats, gx, gw, gb) are absent when data is null; weight,
// bias and the running stats may have any floating dtype; x, y, g, gx share x's. Training needs
// more than one value per channel (the engine checks, as the CPU). One block reduces one channel.
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void batch_norm_forward(const TensorArg& out, const TensorArg& save_mean, const TensorArg& save_invstd,
                        const TensorArg& x, const TensorArg& weight, const TensorArg& bias,
                        const TensorArg& running_mean, const TensorArg& running_var, bool training, double momentum,
                        double eps, cudaStream_t stream);

void batch_norm_backward(const TensorArg& grad_input, const TensorArg& grad_weight, const TensorArg& grad_bias,
                         const TensorArg& grad_out, const TensorArg& x, const TensorArg& weight,
                         const TensorArg& save_mean, const TensorArg& save_invstd, bool training, cudaStream_t stream);

}  // namespace rt::cuda_kernels
