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
  const bool cpu_float = p.dtype() == kFloat32 || p.dtype() == kFloat64;
  return (!p.is_cpu() || cpu_float) && p.is_contiguous() && grad.is_contiguous() && grad.dtype() == p.dtype() &&
         grad.device() == p.device();
}

void adam_group_update(const TensorList& params, const std::function<StateDict&(const Tensor&)>& state_of,
                       const AdamHyper& h) {
  AdamGroupTensors group;
  for (const Tensor& p : params) {
    Tensor grad = p.grad();
    if (!grad.defined()) continue;
    StateDict& st = state_of(p);
    {
      MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
      if (st.empty()) {
        st.insert("step", rt::scalar_tensor(0.0, kFloat32));
        st.insert("exp_avg", rt::zeros_like(p));
        st.insert("exp_avg_sq", rt::zeros_like(p));
      }
      if (h.amsgrad && !st.contains("max_exp_avg_sq")) st.insert("max_exp_avg_sq", rt::zeros_like(p));
    }
    group.params.push_back(p);
    group.grads.push_back(grad);
    group.exp_avgs.push_back(st.at("exp_avg"));
    group.exp_avg_sqs.push_back(st.at("exp_avg_sq"));
    if (h.amsgrad) group.max_exp_avg_sqs.push_back(st.at("max_exp_avg_sq"));
    group.steps.push_back(st.at("step"));
  }
  fused_adam_(group, {h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.decoupled_weight_decay});
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
    detail::adam_group_update(params(g), [this](const Tensor& p) -> StateDict& { return mutable_state(p); },
                              hyper(options(g)));
  }
}

}  // namespace rt::optim
