// rt/plugin_host/op_registry.h — plugin ops joining the engine's dispatcher.
//
// The plugin manager calls register_op_library once a plugin with ops initialized; from then on
// rt.ops.<ns>.<op> (Python) and call_op (C++) reach them, profiled, recorded by autograd, under autocast:
//
//   rt::plugin::load_plugin("build/plugins/fused-bias-gelu");               // registers rtx::fused_bias_gelu
//   rt::Tensor x = rt::randn({64, 256}).requires_grad_(), b = rt::randn({256});
//   std::vector<rt::Tensor> y = rt::plugin::call_op("rtx::fused_bias_gelu", {x, b});
//   y[0].sum().backward();                                                 // through the plugin's backward
//   for (const rt::plugin::OpInfo* op : rt::plugin::registered_ops())
//     std::printf("%s  %s  %s\n", op->qualified_name.c_str(), op->schema.str().c_str(), op->plugin_id.c_str());
//
// What a call does (docs/plugins.md):
//  1. checks the arguments against the schema: their count (trailing ones with defaults may be left out),
//     each one's type, and that every tensor is on one device; errors name the op and the argument
//     ("rtx::fused_bias_gelu: argument 'b' (position 2) must be Tensor, got float");
//  2. inside an autocast region, casts the floating tensor arguments as the op's RtAutocastPolicy says;
//  3. picks the kernel of the tensors' device ("rtx::fused_bias_gelu has no CUDA kernel (kernels: cpu)") and runs
//     it inside rt::OpGuard under the qualified name, so profilers and the debugger see "rtx::fused_bias_gelu";
//     the engine's op-origin registry (rt/op_origin.h) tags that name with the plugin id; a CUDA kernel gets the
//     calling thread's current stream of its device;
//  4. when grad mode is on and a tensor argument requires grad, records a backward node named after the op as
//     PyTorch names generated nodes (fused_bias_gelu -> "FusedBiasGeluBackward0") whose backward calls the
//     plugin's; an op without a backward for that device is refused before it runs. Gradients of results that
//     got none arrive as zeros. A plugin backward runs outside autograd, so backward(create_graph=True) through
//     it is refused with the op's name.
// A kernel's failure is an rt::Error (ValueError for RT_STATUS_INVALID_ARGUMENT, NotImplementedError for
// RT_STATUS_UNSUPPORTED, OutOfMemoryError for RT_STATUS_OUT_OF_MEMORY) carrying the plugin id, the op and the
// plugin's message.
//
// Note [Failed calls]
// A kernel or backward that returns anything but RT_STATUS_OK keeps ownership of every handle it allocated: the
// host ignores returns[] and grad_args[] then (the SDK releases what it put there). On success the host takes
// every handle in them that is not one it lent (a result aliasing an argument is that argument's own handle; a
// gradient must be a new tensor).
//
// Op libraries are never unloaded: the strings and tables a library registered stay valid for the process.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "rt/plugin/abi.h"
#include "rt/plugin_host/op_schema.h"
#include "rt/tensor.h"

namespace rt::plugin {

// One argument of call_op: None (a Tensor? left empty), a tensor, a float, an int or a bool. An int may be
// passed for a float argument; a bool is never taken for an int.
using OpValue = std::variant<std::monostate, rt::Tensor, double, int64_t, bool>;

struct OpInfo {
  std::string qualified_name;  // "rtx::fused_bias_gelu": what the profiler records
  std::string ns;              // "rtx"
  OpSchema schema;
  std::string doc;             // may be empty
  std::string plugin_id;       // "org.rustytorch.fused-bias-gelu"
  std::string backward_name;   // "FusedBiasGeluBackward0"
  RtOpDef def;                 // the plugin's table entry, copied (its pointers live as long as the process)

  bool has_kernel(RtDeviceType d) const { return def.kernels[d] != nullptr; }
  bool has_backward(RtDeviceType d) const { return def.backward[d] != nullptr; }
  bool differentiable() const;                 // a backward for some device
  std::vector<std::string> devices() const;    // {"cpu", "cuda"}: where it has a kernel
  const char* autocast_policy_name() const;    // "none", "lower_precision", "fp32", "promote"
};

// Registers every op of `library` under its namespace, tagged with `plugin_id`. Throws std::runtime_error
// naming the op when a schema does not parse or an op of that name exists already; nothing is registered then.
void register_op_library(const RtOpLibrary& library, const std::string& plugin_id);

// The op registered as `qualified_name` ("ns::op"), or nullptr.
const OpInfo* find_op(std::string_view qualified_name);
// Every registered op, by qualified name. Pointers stay valid for the process.
std::vector<const OpInfo*> registered_ops();
// The namespaces ops were registered under, sorted.
std::vector<std::string> registered_namespaces();

// Calls an op (see the steps above); returns its results in schema order. Throws rt::Error (ValueError for an
// unknown op or bad arguments, DeviceError for a device without a kernel) naming the op.
std::vector<rt::Tensor> call_op(std::string_view qualified_name, const std::vector<OpValue>& args);
std::vector<rt::Tensor> call_op(const OpInfo& op, const std::vector<OpValue>& args);

// "FusedBiasGeluBackward0" for "fused_bias_gelu": PyTorch's name for a generated backward node.
std::string backward_node_name(std::string_view op_name);

}  // namespace rt::plugin
