// rt/optim/adadelta.h — Adadelta (torch.optim.Adadelta): steps scaled by the ratio of running RMS
// of past updates to running RMS of gradients.
//
//   rt::optim::Adadelta opt(model->parameters(), {.lr = 1.0, .rho = 0.9});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update (state "step",
// "square_avg" v, "acc_delta" u):
//   g = -g                                       (if maximize)
//   g = g + weight_decay * p                     (if weight_decay != 0)
//   v = rho * v + (1 - rho) * g * g
//   delta = sqrt(u + eps) / sqrt(v + eps) * g
//   u = rho * u + (1 - rho) * delta * delta
//   p = p - lr * delta
// Validation (ValueError): lr, eps, weight_decay >= 0; 0 <= rho <= 1.
#pragma once
#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct AdadeltaOptions {
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0.0;
  bool maximize = false;

  void validate() const;
  StateDict to_state() const;  // lr, rho, eps, weight_decay, maximize
  void load_state(const StateDict& d);
};

class Adadelta : public OptimizerWithOptions<AdadeltaOptions> {
 public:
  explicit Adadelta(TensorList params, const AdadeltaOptions& options = {});
  explicit Adadelta(std::vector<ParamGroup> groups);
  void step() override;
};

// One update of `param` in place with the caller's state tensors. Runs without recording autograd.
void adadelta_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& acc_delta,
                    const AdadeltaOptions& options);

}  // namespace rt::optim

RT_API_END
