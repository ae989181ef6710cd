#include "rt/optim/nadam.h"

#include <cmath>

#include "option_checks.h"
#include "options_state.h"
#include "parameter_state.h"
#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"

namespace rt::optim {

void NAdamOptions::validate() const {
  detail::check_non_negative("NAdam", "learning rate", lr);
  detail::check_non_negative("NAdam", "epsilon value", eps);
  detail::check_beta("NAdam", 0, betas.first);
  detail::check_beta("NAdam", 1, betas.second);
  detail::check_non_negative("NAdam", "weight_decay value", weight_decay);
  detail::check_non_negative("NAdam", "momentum_decay value", momentum_decay);
}

StateDict NAdamOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"betas", detail::number_pair(betas)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"momentum_decay", detail::number(momentum_decay)}};
}

void NAdamOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "betas", betas);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "momentum_decay", momentum_decay);
}

NAdam::NAdam(TensorList params, const NAdamOptions& options)
    : NAdam(std::vector<ParamGroup>{{std::move(params), options}}) {}

NAdam::NAdam(std::vector<ParamGroup> groups) : OptimizerWithOptions("NAdam", std::move(groups)) {}

void NAdam::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    for (const Tensor& p : params(g)) {
      if (!p.grad().defined()) continue;
      StateDict& st = mutable_state(p);
      const double step = detail::advance_step(st);
      if (!st.contains("mu_product")) {
        MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
        st.insert("mu_product", rt::scalar_tensor(1.0, kFloat32));
      }
      const Tensor exp_avg = detail::state_tensor(st, "exp_avg", p);
      const Tensor exp_avg_sq = detail::state_tensor(st, "exp_avg_sq", p);
      nadam_step_(p, p.grad(), exp_avg, exp_avg_sq, st.at("mu_product"), options(g), step);
    }
  }
}

void nadam_step_(const Tensor& param, const Tensor& grad_in, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& mu_product, const NAdamOptions& o, double step) {
  if (!(step >= 1.0)) throw ValueError("nadam_step_: step must be the count after incrementing it (>= 1)");
  if (!mu_product.defined() || mu_product.numel() != 1)
    throw ValueError("nadam_step_: mu_product must be a one-element tensor (1 before the first step)");
  NoGradGuard ng;
  const double beta1 = o.betas.first, beta2 = o.betas.second;
  Tensor p = param, m = exp_avg, v = exp_avg_sq, grad = grad_in;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  const double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * o.momentum_decay));
  const double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1.0) * o.momentum_decay));
  // See the header: PyTorch keeps the product in float32, and 1.13 multiplies by mu once more.
  const float product = mu_product.item<float>() * float(mu);
  const float product_next = product * float(mu) * float(mu_next);
  Tensor(mu_product).fill_(double(product));
  m.mul_(beta1).add_(grad, 1.0 - beta1);
  rt::addcmul_(v.mul_(beta2), grad, grad, 1.0 - beta2);
  const Tensor denom = (v / (1.0 - std::pow(beta2, step))).sqrt_().add_(o.eps);
  rt::addcdiv_(p, grad, denom, -o.lr * (1.0 - mu) / (1.0 - double(product)));
  rt::addcdiv_(p, m, denom, -o.lr * mu_next / (1.0 - double(product_next)));
}

}  // namespace rt::optim
