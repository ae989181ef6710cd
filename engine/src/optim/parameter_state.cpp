#include "parameter_state.h"

#include "rt/allocator.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"

namespace rt::optim::detail {

Tensor step_tensor(nn::StateDict& state) {
  if (!state.contains("step")) {
    MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
    state.insert("step", rt::scalar_tensor(0.0, kFloat32));
  }
  return state.at("step");
}

double advance_step(nn::StateDict& state) {
  Tensor step = step_tensor(state);
  step.add_(1);
  return step.item<double>();
}

Tensor state_tensor(nn::StateDict& state, const char* name, const Tensor& param, double value) {
  if (!state.contains(name)) {
    MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
    state.insert(name, rt::full_like(param, value));
  }
  return state.at(name);
}

}  // namespace rt::optim::detail
