// rt/optim/functional.h — one optimizer update of one parameter, in place, with state tensors the
// caller keeps (what the optimizer classes do per parameter; the Python optimizers use these for
// parameters on a GPU).
//
//   rt::optim::adam_step_(p, exp_avg, exp_avg_sq, /*max_exp_avg_sq=*/{}, p.grad(),
//                         {.lr = 1e-3, .weight_decay = 0.01, .decoupled_weight_decay = true}, /*step=*/t);
//   rt::optim::sgd_step_(p, momentum_buffer, p.grad(), {.lr = 0.1, .momentum = 0.9}, /*first=*/!had_buffer);
//
// A parameter on a GPU that is contiguous, with a contiguous gradient of its dtype, takes one fused
// kernel (kernels/cuda/optimizer_step.h); any other takes the chain of ops of rt::optim::Adam/AdamW
// and SGD (formulas in rt/optim/adam.h and sgd.h). Both give the classes' results: the kernel
// repeats the chain's arithmetic op for op.
// State: exp_avg, exp_avg_sq (and max_exp_avg_sq for amsgrad; undefined otherwise) and the
// momentum buffer have the parameter's shape, dtype and device. `step` is the step count after
// incrementing it (>= 1). The SGD buffer is ignored when momentum is 0; with `first` set it is
// overwritten with the (weight-decayed) gradient instead of updated, as the first step does.
// Called without recording autograd (under NoGradGuard), like the optimizers' step().
// On the CPU, float32 and float64 parameters take one fused pass too (kernels/cpu/isa/, at the CPU's
// instruction-set level), with the same arithmetic.
//
// A whole parameter group in one call (PyTorch's multi-tensor _fused_adam): what rt::optim::Adam,
// AdamW and SGD and their Python classes run per group; one `_fused_adam_` / `_fused_sgd_` op for
// observers and the profiler, the steps incremented in place, all parameters in one parallel pass.
//
//   rt::optim::fused_adam_({.params = ps, .grads = gs, .exp_avgs = ms, .exp_avg_sqs = vs, .steps = steps},
//                          {.lr = 1e-3});
//
// Parameters that cannot take the CPU pass (on a GPU, float16, non-contiguous) take adam_step_ /
// sgd_step_ one by one, in the same call.
#pragma once
#include <vector>

#include "rt/export.h"
#include "rt/optim/sgd.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::optim {

struct AdamStepOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool decoupled_weight_decay = false;  // true: AdamW
};

void adam_step_(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq,
                const Tensor& grad, const AdamStepOptions& options, double step);

// SGD's hyperparameters are the optimizer's own (rt/optim/sgd.h).
void sgd_step_(const Tensor& param, const Tensor& momentum_buffer, const Tensor& grad, const SGDOptions& options,
               bool first);

// One Adam/AdamW group: lists of equal length, state shaped like each parameter.
struct AdamGroupTensors {
  TensorList params = {}, grads = {}, exp_avgs = {}, exp_avg_sqs = {};
  TensorList max_exp_avg_sqs = {};  // amsgrad: one per parameter; empty without amsgrad
  TensorList steps = {};            // 0-dim step counts before this step (float32 as the optimizers keep them)
};
// Increments each step, then updates each parameter as adam_step_ with that step; maximize: the
// gradients' negation is used. ValueError for lists of different lengths.
void fused_adam_(const AdamGroupTensors& group, const AdamStepOptions& options, bool maximize = false);

// One SGD group; momentum_buffers (one per parameter) only with momentum != 0, `first[i]` when
// buffer i is new (it then receives the gradient, as sgd_step_'s `first`).
struct SgdGroupTensors {
  TensorList params = {}, grads = {};
  TensorList momentum_buffers = {};
  std::vector<bool> first = {};
};
void fused_sgd_(const SgdGroupTensors& group, const SGDOptions& options, bool maximize = false);

}  // namespace rt::optim

RT_API_END
