// kernels/cuda/cross_entropy.h — fused log_softmax + nll (cross_entropy) and nll_loss on CUDA.
//
//   // logits x [N, C] (or [C], or [N, C, d1, ...]), target int64 [N] (or [], [N, d1, ...])
//   size_t bytes = rt::cuda_kernels::cross_entropy_scratch_bytes(S);     // S = target.numel()
//   rt::cuda_kernels::cross_entropy_forward(out, lse, total_weight, x, target, weight, -100,
//                                           LossReduction::Mean, 0.1, /*logits=*/true, scratch, stream);
//   rt::cuda_kernels::cross_entropy_backward(gx, gy, x, target, weight, lse, total_weight, -100,
//                                            LossReduction::Mean, 0.1, true, stream);
//
// Semantics of engine/src/ops/loss.cpp (class_loss): per sample s with target t != ignore_index,
//   l_s = (1 - eps) * -w_t * logp_t + (eps / C) * -sum_c w_c * logp_c,   logp = x - lse (logits)
// or logp = x (logits == false: nll_loss, eps must be 0); ignored samples give 0 loss and weight.
// Per-sample values are computed in double from the row max/sum-exp (float accumulation, double
// for float64), the lse saved as float64 [S]. Reductions sum in double in a fixed order: 'sum'
// -> sum l_s, 'mean' -> sum l_s / sum w_t (NaN when every sample is ignored, as PyTorch), 'none'
// -> l_s in target's shape. total_weight (float64, 1 element) receives sum w_t for 'mean' and 1
// otherwise; the backward divides by it. A target outside [0, C) that is not ignore_index throws
// rt::IndexError after a stream synchronisation. Optional weight [C] (input's dtype) and lse
// (logits only) are absent when their data is null. All tensors contiguous.
// Backward: gx = g_s * (p * ((1-eps) w_t + (eps/C) sum(w)) - (1-eps) w_t [c == t] - (eps/C) w_c),
// with g_s = grad_out[s] ('none') or grad_out[0] / total_weight ('mean') or grad_out[0] ('sum').
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda/device_error_flag.h"
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

enum class LossReduction { None, Mean, Sum };

size_t cross_entropy_scratch_bytes(int64_t samples);

void cross_entropy_forward(const TensorArg& out, const TensorArg& lse, const TensorArg& total_weight,
                           const TensorArg& input, const TensorArg& target, const TensorArg& weight,
                           int64_t ignore_index, LossReduction reduction, double label_smoothing, bool logits,
                           void* scratch, cudaStream_t stream);

void cross_entropy_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& input,
                            const TensorArg& target, const TensorArg& weight, const TensorArg& lse,
                            const TensorArg& total_weight, int64_t ignore_index, LossReduction reduction,
                            double label_smoothing, bool logits, cudaStream_t stream);

}  // namespace rt::cuda_kernels
