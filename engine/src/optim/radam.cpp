#include "rt/optim/radam.h"

#include <cmath>

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void RAdamOptions::validate() const {
  detail::check_non_negative("RAdam", "learning rate", lr);
  detail::check_non_negative("RAdam", "epsilon value", eps);
  detail::check_beta("RAdam", 0, betas.first);
  detail::check_beta("RAdam", 1, betas.second);
  detail::check_non_negative("RAdam", "weight_decay value", weight_decay);
}

StateDict RAdamOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"betas", detail::number_pair(betas)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)}};
}

void RAdamOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "betas", betas);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
}

RAdam::RAdam(TensorList params, const RAdamOptions& options)
    : RAdam(std::vector<ParamGroup>{{std::move(params), options}}) {}

RAdam::RAdam(std::vector<ParamGroup> groups) : OptimizerWithOptions("RAdam", std::move(groups)) {}

void RAdam::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      const double step = detail::advance_step(st);
      const Tensor exp_avg = detail::state_tensor(st, "exp_avg", p);
      const Tensor exp_avg_sq = detail::state_tensor(st, "exp_avg_sq", p);
      radam_step_(p, p.grad(), exp_avg, exp_avg_sq, options(g), step);
    }
  }
}

void radam_step_(const Tensor& param, const Tensor& grad_in, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const RAdamOptions& o, double step) {
  if (!(step >= 1.0)) throw ValueError("radam_step_: step must be the count after incrementing it (>= 1)");
  NoGradGuard ng;
  const double beta1 = o.betas.first, beta2 = o.betas.second;
  Tensor p = param, m = exp_avg, v = exp_avg_sq, grad = grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  const double bias_correction1 = 1.0 - std::pow(beta1, step);
  const double bias_correction2 = 1.0 - std::pow(beta2, step);
  m.mul_(beta1).add_(grad, 1.0 - beta1);
  rt::addcmul_(v.mul_(beta2), grad, grad, 1.0 - beta2);
  const Tensor m_hat = m / bias_correction1;
  const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
  const double rho_t = rho_inf - 2.0 * step * std::pow(beta2, step) / bias_correction2;
  if (rho_t > 5.0) {
    const double rect =
        std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
    const Tensor adaptive_lr = std::sqrt(bias_correction2) / rt::sqrt(v).add_(o.eps);
    p.add_(m_hat * o.lr * adaptive_lr * rect, -1.0);
  } else {
    p.add_(m_hat * o.lr, -1.0);
  }
}

}  // namespace rt::optim
