// rt/optim/nadam.h — NAdam (torch.optim.NAdam): Adam with Nesterov momentum and a momentum
// schedule (Dozat, 2016).
//
//   rt::optim::NAdam opt(model->parameters(), {.lr = 2e-3, .momentum_decay = 4e-3});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step" t after
// incrementing, "mu_product" P (float32 0-dim, as PyTorch keeps it), "exp_avg" m, "exp_avg_sq" v):
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   mu = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay));  mu_next: the same at t + 1
//   P = P * mu                                   (in float32)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   denom = sqrt(v / (1 - beta2^t)) + eps
//   p = p - lr * (1 - mu) / (1 - P) * g / denom
//   p = p - lr * mu_next / (1 - P * mu * mu_next) * m / denom
// The last line is PyTorch 1.13's, which counts mu twice (later releases use P * mu_next); we
// follow the release our parity tests compare with. P * mu * mu_next is also rounded in float32.
// Validation (ValueError): lr, eps, weight_decay, momentum_decay >= 0; 0 <= beta1, beta2 < 1.
// PyTorch 1.13's NAdam has no maximize flag, so neither has this one.
#pragma once
#include <utility>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct NAdamOptions {
  double lr = 2e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum_decay = 4e-3;

  void validate() const;
  StateDict to_state() const;  // lr, betas ([2]), eps, weight_decay, momentum_decay
  void load_state(const StateDict& d);
};

class NAdam : public OptimizerWithOptions<NAdamOptions> {
 public:
  explicit NAdam(TensorList params, const NAdamOptions& options = {});
  explicit NAdam(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with the caller's state tensors; mu_product is a float32 0-dim
// tensor (1 before the first step) updated in place; `step` is the count after incrementing it (>= 1).
// Runs without recording autograd.
void nadam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& mu_product, const NAdamOptions& options, double step);

}  // namespace rt::optim

RT_API_END
