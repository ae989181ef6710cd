// rt/optim/rmsprop.h — RMSprop (torch.optim.RMSprop), plain or centered, with optional momentum.
//
//   rt::optim::RMSprop opt(model->parameters(), {.lr = 1e-2, .momentum = 0.9, .centered = true});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step",
// "square_avg" v, "grad_avg" a when centered, "momentum_buffer" b when momentum > 0):
//   g = -g                                       (if maximize)
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   v = alpha * v + (1 - alpha) * g * g
//   a = alpha * a + (1 - alpha) * g;  denom = sqrt(v - a * a) + eps     (centered)
//   denom = sqrt(v) + eps                                               (otherwise)
//   b = momentum * b + g / denom;  p = p - lr * b                       (momentum > 0)
//   p = p - lr * g / denom                                              (otherwise)
// Validation (ValueError): lr, alpha, eps, weight_decay, momentum >= 0.
#pragma once
#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool maximize = false;

  void validate() const;
  StateDict to_state() const;  // lr, alpha, eps, weight_decay, momentum, centered, maximize
  void load_state(const StateDict& d);
};

class RMSprop : public OptimizerWithOptions<RMSpropOptions> {
 public:
  explicit RMSprop(TensorList params, const RMSpropOptions& options = {});
  explicit RMSprop(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with state tensors the caller keeps (what RMSprop::step does per
// parameter). grad_avg is used when centered and momentum_buffer when momentum > 0; either may be
// undefined otherwise. Runs without recording autograd.
void rmsprop_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& grad_avg,
                   const Tensor& momentum_buffer, const RMSpropOptions& options);

}  // namespace rt::optim

RT_API_END
