// rt/optim/radam.h — RAdam (torch.optim.RAdam): Adam whose adaptive step is switched on, and
// rectified, once the variance of the second moment is tractable (Liu et al., 2019).
//
//   rt::optim::RAdam opt(model->parameters(), {.lr = 1e-3});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step" t after
// incrementing, "exp_avg" m, "exp_avg_sq" v):
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   m_hat = m / (1 - beta1^t)
//   rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
//   rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//               p = p - m_hat * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
//   otherwise:  p = p - m_hat * lr
// Validation (ValueError): lr, eps, weight_decay >= 0; 0 <= beta1, beta2 < 1.
// PyTorch 1.13's RAdam has no maximize flag, so neither has this one.
#pragma once
#include <utility>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct RAdamOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;

  void validate() const;
  StateDict to_state() const;  // lr, betas ([2]), eps, weight_decay
  void load_state(const StateDict& d);
};

class RAdam : public OptimizerWithOptions<RAdamOptions> {
 public:
  explicit RAdam(TensorList params, const RAdamOptions& options = {});
  explicit RAdam(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with the caller's state tensors; `step` is the count after
// incrementing it (>= 1). Runs without recording autograd.
void radam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const RAdamOptions& options, double step);

}  // namespace rt::optim

RT_API_END
