#include "rt/optim/adamw.h"

#include "options_state.h"
#include "rt/autograd/grad_mode.h"

namespace rt::optim {

namespace {
detail::AdamHyper hyper(const AdamWOptions& o) {
  return {o.lr, o.betas.first, o.betas.second, o.eps, o.weight_decay, o.amsgrad, true};
}
}  // namespace

void AdamWOptions::validate() const { detail::validate_adam("AdamW", hyper(*this)); }

StateDict AdamWOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"betas", detail::number_pair(betas)},
          {"eps", detail::number(eps)},
          {"weight_decay", detail::number(weight_decay)},
          {"amsgrad", detail::flag(amsgrad)}};
}

void AdamWOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "betas", betas);
  detail::read(d, "eps", eps);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "amsgrad", amsgrad);
}

AdamW::AdamW(TensorList params, const AdamWOptions& options)
    : AdamW(std::vector<ParamGroup>{{std::move(params), options}}) {}

AdamW::AdamW(std::vector<ParamGroup> groups) : OptimizerWithOptions("AdamW", std::move(groups)) {}

void AdamW::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    detail::adam_group_update(params(g), [this](const Tensor& p) -> StateDict& { return mutable_state(p); },
                              hyper(options(g)));
  }
}

}  // namespace rt::optim
