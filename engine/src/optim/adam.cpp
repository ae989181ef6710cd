#include "rt/optim/adam.h"

#include "options_state.h"
#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/optim/functional.h"

namespace rt::optim {

namespace detail {

void validate_adam(const char* name, const AdamHyper& h) {
  const std::string n(name);
  if (!(h.lr >= 0.0)) throw ValueError(n + ": invalid learning rate: " + std::to_string(h.lr));
  if (!(h.eps >= 0.0)) throw ValueError(n + ": invalid epsilon value: " + std::to_string(h.eps));
  if (!(h.beta1 >= 0.0 && h.beta1 < 1.0)) throw ValueError(n + ": invalid beta parameter at index 0: " + std::to_string(h.beta1));
  if (!(h.beta2 >= 0.0 && h.beta2 < 1.0)) throw ValueError(n + ": invalid beta parameter at index 1: " + std::to_string(h.beta2));
  if (!(h.weight_decay >= 0.0)) throw ValueError(n + ": invalid weight_decay value: " + std::to_string(h.weight_decay));
}

bool fusable(const Tensor& p, const Tensor& grad) {
  return !p.is_cpu() && p.is_contiguous() && grad.is_contiguous() && grad.dtype() == p.dtype() &&
         grad.device() == p.device();
}

void adam_update(Tensor& p, StateDict& st, const AdamHyper& h) {
  Tensor grad = p.grad();
  {
    MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
    if (st.empty()) {
      st.insert("step", rt::scalar_tensor(0.0, kFloat32));
      st.insert("exp_avg", rt::zeros_like(p));
      st.insert("exp_avg_sq", rt::zeros_like(p));
    }
    if (h.amsgrad && !st.contains("max_exp_avg_sq")) st.insert("max_exp_avg_sq", rt::zeros_like(p));
  }
  Tensor step = st.at("step");
  step.add_(1);
  adam_step_(p, st.at("exp_avg"), st.at("exp_avg_sq"), h.amsgrad ? st.at("max_exp_avg_sq") : Tensor(), grad,
             {h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.decoupled_weight_decay}, step.item<double>());
}

}  // namespace detail

namespace {
detail::AdamHyper hyper(const AdamOptions& o) {
  return {o.lr, o.betas.first, o.betas.second, o.eps, o.weight_decay, o.amsgrad, false};
}
}  // namespace

void AdamOptions::validate() const { detail::validate_adam("Adam", hyper(*this)); }

StateDict AdamOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"betas", detail::number_pair(betas)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"amsgrad", detail::flag(amsgrad)}};
}

void AdamOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "betas", betas);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "amsgrad", amsgrad);
}

Adam::Adam(TensorList params, const AdamOptions& options) : Adam(std::vector<ParamGroup>{{std::move(params), options}}) {}

Adam::Adam(std::vector<ParamGroup> groups) : OptimizerWithOptions("Adam", std::move(groups)) {}

void Adam::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    const detail::AdamHyper h = hyper(options(g));
    for (Tensor p : params(g))
      if (p.grad().defined()) detail::adam_update(p, mutable_state(p), h);
  }
}

}  // namespace rt::optim
