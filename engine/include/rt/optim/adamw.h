// rt/optim/adamw.h — Adam with decoupled weight decay (torch.optim.AdamW).
//
//   rt::optim::AdamW opt(model->parameters(), {.lr = 3e-4, .weight_decay = 0.1});
//
// Exactly Adam's update (rt/optim/adam.h) without the L2 term in the gradient, preceded by
//   p = p * (1 - lr * weight_decay)
// Defaults follow PyTorch: lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0.01.
#pragma once
#include <utility>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas = {0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;

  void validate() const;
  StateDict to_state() const;  // lr, betas ([2]), eps, weight_decay, amsgrad
  void load_state(const StateDict& d);
};

class AdamW : public OptimizerWithOptions<AdamWOptions> {
 public:
  explicit AdamW(TensorList params, const AdamWOptions& options = {});
  explicit AdamW(std::vector<ParamGroup> groups);
  void step() override;
};

}  // namespace rt::optim

RT_API_END
