#include "rt/optim/adamax.h"

#include <cmath>

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void AdamaxOptions::validate() const {
  detail::check_non_negative("Adamax", "learning rate", lr);
  detail::check_non_negative("Adamax", "epsilon value", eps);
  detail::check_beta("Adamax", 0, betas.first);
  detail::check_beta("Adamax", 1, betas.second);
  detail::check_non_negative("Adamax", "weight_decay value", weight_decay);
}

StateDict AdamaxOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"betas", detail::number_pair(betas)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"maximize", detail::flag(maximize)}};
}

void AdamaxOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "betas", betas);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "maximize", maximize);
}

Adamax::Adamax(TensorList params, const AdamaxOptions& options)
    : Adamax(std::vector<ParamGroup>{{std::move(params), options}}) {}

Adamax::Adamax(std::vector<ParamGroup> groups) : OptimizerWithOptions("Adamax", std::move(groups)) {}

void Adamax::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      const double step = detail::advance_step(st);
      const Tensor exp_avg = detail::state_tensor(st, "exp_avg", p);
      const Tensor exp_inf = detail::state_tensor(st, "exp_inf", p);
      adamax_step_(p, p.grad(), exp_avg, exp_inf, options(g), step);
    }
  }
}

void adamax_step_(const Tensor& param, const Tensor& grad_in, const Tensor& exp_avg, const Tensor& exp_inf,
                  const AdamaxOptions& o, double step) {
  if (!(step >= 1.0)) throw ValueError("adamax_step_: step must be the count after incrementing it (>= 1)");
  NoGradGuard ng;
  Tensor p = param, m = exp_avg, u = exp_inf, grad = o.maximize ? rt::neg(grad_in) : grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  m.mul_(o.betas.first).add_(grad, 1.0 - o.betas.first);
  u.mul_(o.betas.second);
  u.copy_(rt::maximum(u, rt::abs(grad).add_(o.eps)));
  const double clr = o.lr / (1.0 - std::pow(o.betas.first, step));
  rt::addcdiv_(p, m, u, -clr);
}

}  // namespace rt::optim
