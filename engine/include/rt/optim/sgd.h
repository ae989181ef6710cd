// rt/optim/sgd.h — stochastic gradient descent with momentum (torch.optim.SGD).
//
//   rt::optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9, .nesterov = true});
//   opt.zero_grad(); loss.backward(); opt.step();
//
// Per parameter p with gradient g, exactly PyTorch's single-tensor update:
//   g = g + weight_decay * p                        (if weight_decay != 0)
//   if momentum != 0:
//     buf = g                         on the first step (a copy; "momentum_buffer" state)
//     buf = momentum * buf + (1 - dampening) * g    afterwards
//     g = nesterov ? g + momentum * buf : buf
//   p = p - lr * g
// Validation (ValueError): lr, momentum, weight_decay >= 0; nesterov needs momentum > 0 and
// dampening == 0.
#pragma once
#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;

  void validate() const;
  StateDict to_state() const;  // lr, momentum, dampening, weight_decay, nesterov
  void load_state(const StateDict& d);
};

class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  explicit SGD(TensorList params, const SGDOptions& options = {});
  explicit SGD(std::vector<ParamGroup> groups);
  void step() override;
};

}  // namespace rt::optim

RT_API_END
