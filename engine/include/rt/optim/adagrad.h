// rt/optim/adagrad.h — Adagrad (torch.optim.Adagrad): per-coordinate steps scaled by the root of
// the summed squared gradients, with optional lr decay.
//
//   rt::optim::Adagrad opt(model->parameters(), {.lr = 0.1, .initial_accumulator_value = 0.1});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step" t after
// incrementing, "sum" s, created for every parameter by the constructor as PyTorch does, with
// s = initial_accumulator_value):
//   g = -g                                       (if maximize)
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   clr = lr / (1 + (t - 1) * lr_decay)
//   s = s + g * g
//   p = p - clr * g / (sqrt(s) + eps)
// Validation (ValueError): lr, lr_decay, weight_decay, initial_accumulator_value, eps >= 0.
#pragma once
#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0.0;
  double weight_decay = 0.0;
  double initial_accumulator_value = 0.0;
  double eps = 1e-10;
  bool maximize = false;

  void validate() const;
  StateDict to_state() const;  // lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize
  void load_state(const StateDict& d);
};

class Adagrad : public OptimizerWithOptions<AdagradOptions> {
 public:
  explicit Adagrad(TensorList params, const AdagradOptions& options = {});
  explicit Adagrad(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with the caller's "sum" tensor; `step` is the count after
// incrementing it (>= 1). Runs without recording autograd.
void adagrad_step_(const Tensor& param, const Tensor& grad, const Tensor& sum, const AdagradOptions& options,
                   double step);

}  // namespace rt::optim

RT_API_END
