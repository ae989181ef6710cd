#include "rt/optim/adadelta.h"

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void AdadeltaOptions::validate() const {
  detail::check_non_negative("Adadelta", "learning rate", lr);
  detail::check_unit_interval("Adadelta", "rho value", rho);
  detail::check_non_negative("Adadelta", "epsilon value", eps);
  detail::check_non_negative("Adadelta", "weight_decay value", weight_decay);
}

StateDict AdadeltaOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"rho", detail::number(rho)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"maximize", detail::flag(maximize)}};
}

void AdadeltaOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "rho", rho);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "maximize", maximize);
}

Adadelta::Adadelta(TensorList params, const AdadeltaOptions& options)
    : Adadelta(std::vector<ParamGroup>{{std::move(params), options}}) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups) : OptimizerWithOptions("Adadelta", std::move(groups)) {}

void Adadelta::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      detail::advance_step(st);
      const Tensor square_avg = detail::state_tensor(st, "square_avg", p);
      const Tensor acc_delta = detail::state_tensor(st, "acc_delta", p);
      adadelta_step_(p, p.grad(), square_avg, acc_delta, options(g));
    }
  }
}

void adadelta_step_(const Tensor& param, const Tensor& grad_in, const Tensor& square_avg, const Tensor& acc_delta,
                    const AdadeltaOptions& o) {
  NoGradGuard ng;
  Tensor p = param, v = square_avg, u = acc_delta, grad = o.maximize ? rt::neg(grad_in) : grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  rt::addcmul_(v.mul_(o.rho), grad, grad, 1.0 - o.rho);
  const Tensor std = (v + o.eps).sqrt_();
  Tensor delta = (u + o.eps).sqrt_();
  delta.div_(std).mul_(grad);
  rt::addcmul_(u.mul_(o.rho), delta, delta, 1.0 - o.rho);
  p.add_(delta, -o.lr);
}

}  // namespace rt::optim
