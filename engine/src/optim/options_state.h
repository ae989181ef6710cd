// Optimizer options as state-dict tensors, and the update Adam and AdamW share.
#pragma once
#include <utility>

#include "rt/nn/state_dict.h"

namespace rt::optim::detail {

Tensor number(double v);                           // float64 0-dim
Tensor flag(bool v);                               // bool 0-dim
Tensor number_pair(std::pair<double, double> v);   // float64 [2]
// Each keeps `v` when `key` is absent and throws ValueError when the tensor has the wrong size.
void read(const nn::StateDict& d, const char* key, double& v);
void read(const nn::StateDict& d, const char* key, bool& v);
void read(const nn::StateDict& d, const char* key, std::pair<double, double>& v);

struct AdamHyper {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, decoupled_weight_decay;
};
void validate_adam(const char* name, const AdamHyper& h);
// One Adam/AdamW step of `p` (which has a gradient), creating its state on first use.
void adam_update(Tensor& p, nn::StateDict& state, const AdamHyper& h);
// True when the fused CUDA step can update p: on a GPU, contiguous, with a contiguous gradient of
// its dtype (kernels/cuda/optimizer_step.h); otherwise the optimizers compose ops.
bool fusable(const Tensor& p, const Tensor& grad);

}  // namespace rt::optim::detail
