// rt/optim/adam.h — Adam (torch.optim.Adam), L2 weight decay folded into the gradient.
//
//   rt::optim::Adam opt(model->parameters(), {.lr = 1e-3, .betas = {0.9, 0.999}, .amsgrad = true});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (t = the step count
// after incrementing it; state "step", "exp_avg" m, "exp_avg_sq" v, "max_exp_avg_sq" v_max):
//   g = g + weight_decay * p                       (if weight_decay != 0)
//   m = m + (1 - beta1) * (g - m)                  (lerp)
//   v = beta2 * v + (1 - beta2) * g * g
//   v_max = max(v_max, v)                          (amsgrad only; the denominator uses v_max)
//   denom = sqrt(v) / sqrt(1 - beta2^t) + eps
//   p = p - (lr / (1 - beta1^t)) * m / denom
// Validation (ValueError): lr, eps, weight_decay >= 0; 0 <= beta1, beta2 < 1.
// See rt/optim/adamw.h for decoupled weight decay.
#pragma once
#include <utility>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct AdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;

  void validate() const;
  StateDict to_state() const;  // lr, betas ([2]), eps, weight_decay, amsgrad
  void load_state(const StateDict& d);
};

class Adam : public OptimizerWithOptions<AdamOptions> {
 public:
  explicit Adam(TensorList params, const AdamOptions& options = {});
  explicit Adam(std::vector<ParamGroup> groups);
  void step() override;
};

}  // namespace rt::optim

RT_API_END
