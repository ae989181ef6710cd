// rt/optim/adamax.h — Adamax (torch.optim.Adamax): Adam with the infinity norm in place of the
// second moment.
//
//   rt::optim::Adamax opt(model->parameters(), {.lr = 2e-3});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step" t after
// incrementing, "exp_avg" m, "exp_inf" u):
//   g = -g                                       (if maximize)
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   m = beta1 * m + (1 - beta1) * g
//   u = max(beta2 * u, |g| + eps)
//   p = p - lr / (1 - beta1^t) * m / u
// Validation (ValueError): lr, eps, weight_decay >= 0; 0 <= beta1, beta2 < 1.
#pragma once
#include <utility>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct AdamaxOptions {
  double lr = 2e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool maximize = false;

  void validate() const;
  StateDict to_state() const;  // lr, betas ([2]), eps, weight_decay, maximize
  void load_state(const StateDict& d);
};

class Adamax : public OptimizerWithOptions<AdamaxOptions> {
 public:
  explicit Adamax(TensorList params, const AdamaxOptions& options = {});
  explicit Adamax(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with the caller's state tensors; `step` is the count after
// incrementing it (>= 1). Runs without recording autograd.
void adamax_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                  const AdamaxOptions& options, double step);

}  // namespace rt::optim

RT_API_END
