// rt/plugin_host/op_checks.h — checks of a registered plugin op, as `rtorch plugin check` runs them (PyTorch's
// torch.library.opcheck idea): does the schema tell the truth about mutation and aliasing, is there a backward,
// does it agree with finite differences, and do the CPU and CUDA kernels agree.
//
//   const rt::plugin::OpInfo* op = rt::plugin::find_op("rtx::fused_bias_gelu");
//   std::optional<std::vector<rt::plugin::OpValue>> sample = rt::plugin::find_sample_arguments(*op);
//   for (const rt::plugin::OpCheck& c : rt::plugin::check_op(*op, *sample))
//     std::printf("%s %s: %s\n", c.passed ? "ok  " : "FAIL", c.name.c_str(), c.detail.c_str());
//
// Each check returns an OpCheck instead of throwing, so one failing check does not hide the others; an exception
// the op throws during a check is that check's failure, with its message. Checks run the op's kernels for real.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "rt/plugin_host/op_registry.h"

namespace rt::plugin {

struct OpCheck {
  std::string name;    // "schema: mutation", "schema: aliasing", "autograd registered", "gradcheck", "cpu vs cuda"
  bool passed = false;
  bool skipped = false;  // not applicable here (no CUDA device, not differentiable); passed is true then
  std::string detail;  // what was compared, or what went wrong
};

// Arguments the op's CPU kernel accepts, found by trying common shapes for its tensors (all [3, 4]; the first
// [3, 4] and the others [4]; all [4]; all [2, 3, 4]) in float64, scalars at their defaults (or 0.5, 2, False).
// nullopt when the kernel refuses them all (then pass your own to the checks below).
std::optional<std::vector<OpValue>> find_sample_arguments(const OpInfo& op);

// Runs the op once under no_grad: arguments not marked (a!) must come back unchanged; results must not share
// memory with an argument unless the schema says Tensor(a).
OpCheck check_op_schema_mutation(const OpInfo& op, const std::vector<OpValue>& args);
OpCheck check_op_schema_aliasing(const OpInfo& op, const std::vector<OpValue>& args);
// Whether the op has a backward for the device of `args`' tensors (skipped when no argument is floating).
OpCheck check_op_autograd_registered(const OpInfo& op, const std::vector<OpValue>& args);
// Float64 central differences (eps 1e-6) against the op's backward for sum(result * w), every floating tensor
// argument; passes when every element agrees within atol + rtol * |numeric|.
OpCheck op_gradcheck(const OpInfo& op, const std::vector<OpValue>& args, double atol = 1e-6, double rtol = 1e-4);
// The CUDA kernel against the CPU one on the same arguments (and their gradients when differentiable); skipped
// without a CUDA device or a CUDA kernel.
OpCheck check_op_cpu_vs_cuda(const OpInfo& op, const std::vector<OpValue>& args, double tolerance = 1e-5);

// All of the above, in that order.
std::vector<OpCheck> check_op(const OpInfo& op, const std::vector<OpValue>& args);

}  // namespace rt::plugin
