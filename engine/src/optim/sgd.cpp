#include "rt/optim/sgd.h"

#include "options_state.h"
#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"
#include "rt/optim/functional.h"

namespace rt::optim {

void SGDOptions::validate() const {
  if (!(lr >= 0.0)) throw ValueError("SGD: invalid learning rate: " + std::to_string(lr));
  if (!(momentum >= 0.0)) throw ValueError("SGD: invalid momentum value: " + std::to_string(momentum));
  if (!(weight_decay >= 0.0)) throw ValueError("SGD: invalid weight_decay value: " + std::to_string(weight_decay));
  if (nesterov && (momentum <= 0.0 || dampening != 0.0))
    throw ValueError("SGD: nesterov momentum requires a momentum and zero dampening (momentum=" +
                     std::to_string(momentum) + ", dampening=" + std::to_string(dampening) + ")");
}

StateDict SGDOptions::to_state() const {
  return {{"lr", detail::number(lr)},
          {"momentum", detail::number(momentum)},
          {"dampening", detail::number(dampening)},
          {"weight_decay", detail::number(weight_decay)},
          {"nesterov", detail::flag(nesterov)}};
}

void SGDOptions::load_state(const StateDict& d) {
  detail::read(d, "lr", lr);
  detail::read(d, "momentum", momentum);
  detail::read(d, "dampening", dampening);
  detail::read(d, "weight_decay", weight_decay);
  detail::read(d, "nesterov", nesterov);
}

SGD::SGD(TensorList params, const SGDOptions& options) : SGD(std::vector<ParamGroup>{{std::move(params), options}}) {}

SGD::SGD(std::vector<ParamGroup> groups) : OptimizerWithOptions("SGD", std::move(groups)) {}

void SGD::step() {
  NoGradGuard ng;
  for (size_t g = 0; g < num_param_groups(); ++g) {
    const SGDOptions& o = options(g);
    SgdGroupTensors group;
    for (Tensor p : params(g)) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      group.params.push_back(p);
      group.grads.push_back(grad);
      if (o.momentum == 0.0) continue;
      StateDict& st = mutable_state(p);
      Tensor* found = st.find("momentum_buffer");
      const bool first = !found || !found->defined();
      if (first) {
        MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
        st.insert("momentum_buffer", rt::empty_like(p));  // the first step writes the gradient into it
      }
      group.momentum_buffers.push_back(st.at("momentum_buffer"));
      group.first.push_back(first);
    }
    fused_sgd_(group, o);
  }
}

}  // namespace rt::optim
