// Optimizer options as state-dict tensors, and the update Adam and AdamW share.
#pragma once
#include <functional>
#include <initializer_list>
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
// One Adam/AdamW step of the parameters of a group that have a gradient (one fused_adam_ call),
// creating their state (through state_of) on first use.
void adam_group_update(const TensorList& params, const std::function<nn::StateDict&(const Tensor&)>& state_of,
                       const AdamHyper& h);
// True when a fused step can update p: contiguous, with a contiguous gradient of its dtype, on a GPU
// (kernels/cuda/optimizer_step.h) or float32/float64 on the CPU (fused_steps.cpp); otherwise the
// optimizers compose ops.
bool fusable(const Tensor& p, const Tensor& grad);
// True when every defined state tensor has p's dtype, device and sizes and is contiguous.
bool states_fit(const Tensor& p, std::initializer_list<const Tensor*> states);

}  // namespace rt::optim::detail
