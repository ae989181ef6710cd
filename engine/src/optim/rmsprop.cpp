#include "rt/optim/rmsprop.h"

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void RMSpropOptions::validate() const {
  detail::check_non_negative("RMSprop", "learning rate", lr);
  detail::check_non_negative("RMSprop", "epsilon value", eps);
  detail::check_non_negative("RMSprop", "momentum value", momentum);
  detail::check_non_negative("RMSprop", "weight_decay value", weight_decay);
  detail::check_non_negative("RMSprop", "alpha value", alpha);
}

StateDict RMSpropOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"alpha", detail::number(alpha)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"momentum", detail::number(momentum)},
          {"centered", detail::flag(centered)},
          {"maximize", detail::flag(maximize)}};
}

void RMSpropOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "alpha", alpha);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "momentum", momentum);
  detail::read(d, "centered", centered);
  detail::read(d, "maximize", maximize);
}

RMSprop::RMSprop(TensorList params, const RMSpropOptions& options)
    : RMSprop(std::vector<ParamGroup>{{std::move(params), options}}) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups) : OptimizerWithOptions("RMSprop", std::move(groups)) {}

void RMSprop::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    const RMSpropOptions& o = options(g);
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      detail::advance_step(st);
      const Tensor square_avg = detail::state_tensor(st, "square_avg", p);
      const Tensor buf = o.momentum > 0.0 ? detail::state_tensor(st, "momentum_buffer", p) : Tensor();
      const Tensor grad_avg = o.centered ? detail::state_tensor(st, "grad_avg", p) : Tensor();
      rmsprop_step_(p, p.grad(), square_avg, grad_avg, buf, o);
    }
  }
}

void rmsprop_step_(const Tensor& param, const Tensor& grad_in, const Tensor& square_avg, const Tensor& grad_avg,
                   const Tensor& momentum_buffer, const RMSpropOptions& o) {
  NoGradGuard ng;
  if (o.centered && !grad_avg.defined())
    throw ValueError("rmsprop_step_: centered=true needs a grad_avg tensor of the parameter's shape");
  if (o.momentum > 0.0 && !momentum_buffer.defined())
    throw ValueError("rmsprop_step_: momentum > 0 needs a momentum_buffer tensor of the parameter's shape");
  Tensor p = param, v = square_avg, grad = o.maximize ? rt::neg(grad_in) : grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  rt::addcmul_(v.mul_(o.alpha), grad, grad, 1.0 - o.alpha);
  Tensor denom;
  if (o.centered) {
    Tensor a = grad_avg;
    a.mul_(o.alpha).add_(grad, 1.0 - o.alpha);
    denom = rt::sub(v, rt::mul(a, a)).sqrt_();
  } else {
    denom = rt::sqrt(v);
  }
  denom.add_(o.eps);
  if (o.momentum > 0.0) {
    Tensor b = momentum_buffer;
    rt::addcdiv_(b.mul_(o.momentum), grad, denom);
    p.add_(b, -o.lr);
  } else {
    rt::addcdiv_(p, grad, denom, -o.lr);
  }
}

}  // namespace rt::optim
