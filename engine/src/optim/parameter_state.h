// Per-parameter optimizer state created on first use, as PyTorch's optimizers fill self.state[p].
#pragma once
#include "rt/nn/state_dict.h"

namespace rt::optim::detail {

// state["step"], a float32 0-dim tensor created at 0 when absent.
Tensor step_tensor(nn::StateDict& state);
// Adds one to the float32 0-dim "step" tensor of `state` (created at 0 on first use) and returns the
// count after incrementing, as PyTorch's optimizers do with state["step"].
double advance_step(nn::StateDict& state);

// state[name], created filled with `value` in the shape, dtype and device of `param` (under
// MemoryCategory::OptimizerState) when absent, e.g. after loading a state dict saved without it.
Tensor state_tensor(nn::StateDict& state, const char* name, const Tensor& param, double value = 0.0);

}  // namespace rt::optim::detail
