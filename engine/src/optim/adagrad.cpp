#include "rt/optim/adagrad.h"

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void AdagradOptions::validate() const {
  detail::check_non_negative("Adagrad", "learning rate", lr);
  detail::check_non_negative("Adagrad", "lr_decay value", lr_decay);
  detail::check_non_negative("Adagrad", "weight_decay value", weight_decay);
  detail::check_non_negative("Adagrad", "initial_accumulator_value value", initial_accumulator_value);
  detail::check_non_negative("Adagrad", "epsilon value", eps);
}

StateDict AdagradOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"lr_decay", detail::number(lr_decay)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"initial_accumulator_value", detail::number(initial_accumulator_value)},
          {"maximize", detail::flag(maximize)}};
}

void AdagradOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "lr_decay", lr_decay);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "initial_accumulator_value", initial_accumulator_value);
  detail::read(d, "maximize", maximize);
}

Adagrad::Adagrad(TensorList params, const AdagradOptions& options)
    : Adagrad(std::vector<ParamGroup>{{std::move(params), options}}) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups) : OptimizerWithOptions("Adagrad", std::move(groups)) {
  // PyTorch creates Adagrad's state up front, so a state dict taken before the first step has it.
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g)
    for (const Tensor& p : params(g)) {
      StateDict& st = mutable_state(p);
      detail::step_tensor(st);
      detail::state_tensor(st, "sum", p, options(g).initial_accumulator_value);
    }
}

void Adagrad::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    const AdagradOptions& o = options(g);
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      const Tensor sum = detail::state_tensor(st, "sum", p, o.initial_accumulator_value);
      adagrad_step_(p, p.grad(), sum, o, detail::advance_step(st));
    }
  }
}

void adagrad_step_(const Tensor& param, const Tensor& grad_in, const Tensor& sum, const AdagradOptions& o,
                   double step) {
  if (!(step >= 1.0)) throw ValueError("adagrad_step_: step must be the count after incrementing it (>= 1)");
  NoGradGuard ng;
  Tensor p = param, s = sum, grad = o.maximize ? rt::neg(grad_in) : grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  const double clr = o.lr / (1.0 + (step - 1.0) * o.lr_decay);
  rt::addcmul_(s, grad, grad, 1.0);
  Tensor std = rt::sqrt(s);
  std.add_(o.eps);
  rt::addcdiv_(p, grad, std, -clr);
}

}  // namespace rt::optim
