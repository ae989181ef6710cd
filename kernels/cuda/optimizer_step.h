// kernels/cuda/optimizer_step.h — fused in-place Adam/AdamW and SGD updates of one parameter tensor.
//
//   using namespace rt::cuda_kernels;
//   AdamStepParams a{.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.01,
//                    .decoupled_weight_decay = true, .step = double(t)};   // t: the count after incrementing
//   adam_step(param, exp_avg, exp_avg_sq, /*max_exp_avg_sq=*/nullptr, grad, a, stream);
//   SgdStepParams s{.lr = 0.1, .momentum = 0.9, .nesterov = true, .first_step = !had_buffer};
//   sgd_step(param, &momentum_buffer, grad, s, stream);
//
// One launch per tensor replaces the CPU optimizers' chain of elementwise ops
// (engine/src/optim/adam.cpp, sgd.cpp) and reproduces it operation for operation:
//   * every intermediate the CPU stores in a tensor (the weight-decayed gradient, m, v, v_max,
//     denom after each op, the updated parameter) is rounded to the parameter's dtype at the
//     same point, and kept in float (half types, float32) or double (float64) in between;
//   * scalars the CPU passes as tensors (mul_(beta2), div_(sqrt(1 - beta2^t)), add_(eps),
//     mul_(1 - lr * wd), buf.mul_(momentum)) are rounded to the parameter's dtype, those it passes
//     as alpha/value/weight (add(p, wd), lerp weight, addcmul/addcdiv value) are not;
//   * bias corrections are computed on the host in double as the CPU does;
//   * arithmetic uses round-to-nearest intrinsics (no fused multiply-add), like the CPU's build.
// So for one input the result is meant to equal the CPU's bit for bit (only compiled here, not
// yet compared on a GPU).
// Tensors: param, grad and every state tensor contiguous, of param's sizes and dtype (float16,
// bfloat16, float32 or float64): the CPU keeps state in the parameter's dtype (zeros_like(p)).
// The gradient is read, never written (weight decay is applied to a copy in registers).
// Errors: DTypeError (dtype), ShapeError (sizes), ValueError (non-contiguous, missing state,
// step < 1). Hyperparameters are validated by the optimizer classes, not here.
#pragma once
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

// Adam (decoupled_weight_decay = false) and AdamW (true), PyTorch's single-tensor update:
//   g = g + weight_decay * p          (Adam, weight_decay != 0)
//   p = p * (1 - lr * weight_decay)   (AdamW, weight_decay != 0)
//   m = m + (1 - beta1) * (g - m);  v = beta2 * v + (1 - beta2) * g * g
//   v_max = max(v_max, v) (amsgrad: max_exp_avg_sq given; NaN propagates); denominator from v_max
//   denom = sqrt(v) / sqrt(1 - beta2^step) + eps;  p = p - (lr / (1 - beta1^step)) * m / denom
struct AdamStepParams {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = false;  // AdamW
  double step = 1;                      // the step count after incrementing it (>= 1)
};

// max_exp_avg_sq: nullptr for plain Adam, the amsgrad state otherwise.
void adam_step(const TensorArg& param, const TensorArg& exp_avg, const TensorArg& exp_avg_sq,
               const TensorArg* max_exp_avg_sq, const TensorArg& grad, const AdamStepParams& params,
               cudaStream_t stream);

// SGD, PyTorch's single-tensor update:
//   g = g + weight_decay * p                                      (weight_decay != 0)
//   buf = g (first_step) or buf = momentum * buf + (1 - dampening) * g   (momentum != 0)
//   g = nesterov ? g + momentum * buf : buf                       (momentum != 0)
//   p = p - lr * g
struct SgdStepParams {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool first_step = false;  // the momentum buffer is new: it receives g instead of being updated
};

// momentum_buffer: required when momentum != 0 (its contents are ignored on the first step),
// nullptr otherwise.
void sgd_step(const TensorArg& param, const TensorArg* momentum_buffer, const TensorArg& grad,
              const SgdStepParams& params, cudaStream_t stream);

}  // namespace rt::cuda_kernels
