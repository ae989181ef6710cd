// Calling a plugin op: argument checks, autocast, the kernel under rt::OpGuard, and the autograd node.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "ops/host_tensors.h"
#include "ops/op_errors.h"
#include "rt/amp/autocast.h"
#include "rt/autograd/custom_function.h"
#include "rt/autograd/grad_mode.h"
#include "rt/cuda.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/plugin_host/op_registry.h"
#include "rt/plugin_host/plugin_manager.h"

namespace rt::plugin {
namespace {

const char* device_type_name(RtDeviceType d) { return d == RT_DEVICE_CUDA ? "CUDA" : "CPU"; }

bool is_tensor_type(ArgType t) { return t == ArgType::Tensor || t == ArgType::OptionalTensor; }

std::string value_type_name(const OpValue& v) {
  switch (v.index()) {
    case 0: return "None";
    case 1: return "Tensor";
    case 2: return "float";
    case 3: return "int";
    default: return "bool";
  }
}

std::string arg_label(const OpInfo& op, size_t i) {
  return fmt::format("argument '{}' (position {})", op.schema.arguments[i].name, i + 1);
}

// The arguments in schema order, defaults filled in, each checked against its declared type.
std::vector<OpValue> bind_arguments(const OpInfo& op, const std::vector<OpValue>& given) {
  const auto& params = op.schema.arguments;
  if (given.size() > params.size())
    throw rt::ValueError(fmt::format("{}: takes {} argument{} ({}), got {}", op.qualified_name, params.size(),
                                     params.size() == 1 ? "" : "s", op.schema.str(), given.size()));
  std::vector<OpValue> args = given;
  for (size_t i = args.size(); i < params.size(); ++i) {
    if (!params[i].default_value)
      throw rt::ValueError(fmt::format("{}: missing {} ({})", op.qualified_name, arg_label(op, i), op.schema.str()));
    std::visit([&](const auto& d) { args.emplace_back(d); }, *params[i].default_value);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    OpValue& v = args[i];
    const ArgType t = params[i].type;
    bool ok = false;
    switch (t) {
      case ArgType::Tensor: ok = v.index() == 1 && std::get<1>(v).defined(); break;
      case ArgType::OptionalTensor:
        if (v.index() == 1 && !std::get<1>(v).defined()) v = std::monostate{};
        ok = v.index() == 0 || v.index() == 1;
        break;
      case ArgType::Float:
        if (v.index() == 3) v = double(std::get<3>(v));
        ok = v.index() == 2;
        break;
      case ArgType::Int: ok = v.index() == 3; break;
      case ArgType::Bool: ok = v.index() == 4; break;
    }
    if (!ok) {
      const std::string got = v.index() == 1 && !std::get<1>(v).defined() ? "an undefined Tensor" : value_type_name(v);
      throw rt::ValueError(fmt::format("{}: {} must be {}, got {}", op.qualified_name, arg_label(op, i),
                                       arg_type_name(t), got));
    }
  }
  return args;
}

Device common_device(const OpInfo& op, const std::vector<OpValue>& args) {
  std::optional<Device> device;
  size_t first = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].index() != 1) continue;
    const Device d = std::get<1>(args[i]).device();
    if (!device) {
      device = d;
      first = i;
    } else if (d != *device) {
      throw rt::DeviceError(fmt::format("{}: every tensor must be on one device: {} is on {}, {} on {}",
                                        op.qualified_name, arg_label(op, first), device->str(), arg_label(op, i),
                                        d.str()));
    }
  }
  return device.value_or(Device::cpu());
}

void apply_autocast(const OpInfo& op, std::vector<OpValue>& args) {
  if (op.def.autocast == RT_AUTOCAST_NONE) return;
  TensorList tensors;
  std::vector<size_t> where;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].index() != 1 || op.schema.arguments[i].alias.set) continue;  // never cast what the op writes or returns
    tensors.push_back(std::get<1>(args[i]));
    where.push_back(i);
  }
  const amp::OpCastPolicy policy = op.def.autocast == RT_AUTOCAST_LOWER_PRECISION ? amp::OpCastPolicy::LowerPrecision
                                   : op.def.autocast == RT_AUTOCAST_FP32         ? amp::OpCastPolicy::Float32
                                                                                  : amp::OpCastPolicy::Promote;
  TensorList cast = amp::autocast_inputs(policy, tensors);
  for (size_t k = 0; k < cast.size(); ++k) args[where[k]] = cast[k];
}

std::string kernel_list(const OpInfo& op) {
  const auto d = op.devices();
  std::string out;
  for (const auto& s : d) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// The CUDA stream a kernel of `device` launches on (the calling thread's current one), and that device made
// current for the call.
struct DeviceScope {
  explicit DeviceScope(const Device& device) {
    if (device.is_cuda()) {
      guard.emplace(rt::cuda::Stream::current(device.index));
      stream = rt::cuda::Stream::current(device.index).handle();
    }
  }
  std::optional<rt::cuda::StreamGuard> guard;
  void* stream = nullptr;
};

// Lent handles for the arguments; freed when the call is done.
struct LentArguments {
  std::vector<TensorHandle> handles;
  std::vector<RtValue> values;

  explicit LentArguments(const std::vector<OpValue>& args) {
    values.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      RtValue& v = values[i];
      std::memset(&v, 0, sizeof v);
      std::visit(
          [&](const auto& x) {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::monostate>) {
              v.kind = RT_VALUE_NONE;
            } else if constexpr (std::is_same_v<X, rt::Tensor>) {
              handles.emplace_back(new_tensor_handle(x));
              v.kind = RT_VALUE_TENSOR;
              v.as.tensor = handles.back().get();
            } else if constexpr (std::is_same_v<X, double>) {
              v.kind = RT_VALUE_FLOAT;
              v.as.f = x;
            } else if constexpr (std::is_same_v<X, int64_t>) {
              v.kind = RT_VALUE_INT;
              v.as.i = x;
            } else {
              v.kind = RT_VALUE_BOOL;
              v.as.b = x ? 1 : 0;
            }
          },
          args[i]);
    }
  }
  int index_of(const RtTensor* h) const {
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].kind == RT_VALUE_TENSOR && values[i].as.tensor == h) return int(i);
    return -1;
  }
};

// The kernel's results, as engine tensors; handles it allocated are taken back.
std::vector<rt::Tensor> collect_results(const OpInfo& op, const std::vector<OpValue>& args, const LentArguments& lent,
                                        std::vector<RtValue>& returns) {
  std::vector<rt::Tensor> out(returns.size());
  std::string problem;
  for (size_t r = 0; r < returns.size(); ++r) {
    RtValue& v = returns[r];
    if (v.kind != RT_VALUE_TENSOR || !v.as.tensor) {
      if (problem.empty()) problem = fmt::format("its kernel left result {} unset", r);
      continue;
    }
    const int arg = lent.index_of(v.as.tensor);
    const int declared = op.schema.aliased_argument(r);
    if (arg >= 0) {
      out[r] = std::get<1>(args[size_t(arg)]);
      if (declared != arg && problem.empty())
        problem = fmt::format("its kernel returned {} as result {}, which the schema does not declare an alias of it "
                              "(write Tensor({}!) on the argument and Tensor({}) on the result)",
                              arg_label(op, size_t(arg)), r, 'a', 'a');
    } else {
      out[r] = take_tensor_handle(v.as.tensor);
      if (declared >= 0 && problem.empty())
        problem = fmt::format("the schema says result {} is {}, but its kernel returned a new tensor", r,
                              arg_label(op, size_t(declared)));
    }
    v.as.tensor = nullptr;
  }
  if (!problem.empty())
    throw rt::Error(fmt::format("plugin {}: {}: {}", op.plugin_id, op.qualified_name, problem));
  return out;
}

// What the backward needs from the forward call.
struct SavedCall {
  const OpInfo* op = nullptr;
  Device device;
  std::vector<OpValue> scalars;                      // the non-tensor arguments (tensors: monostate)
  std::vector<autograd::SavedTensor> tensors;        // per argument (undefined for non-tensors)
  std::vector<autograd::SavedTensor> results;
  std::vector<int32_t> needs_grad;                   // per argument
  std::vector<size_t> tensor_args;                   // argument index of each node input
};

TensorList run_backward(SavedCall& s, const autograd::Node* node, const TensorList& grads) {
  const OpInfo& op = *s.op;
  if (rt::GradMode::is_enabled())
    throw rt::AutogradError(fmt::format(
        "{}: backward with create_graph=True through plugin op {} is not supported: the plugin's backward runs "
        "outside autograd (compute the higher-order gradient with the engine's own ops)",
        op.backward_name, op.qualified_name));
  const RtDeviceType dt = s.device.is_cuda() ? RT_DEVICE_CUDA : RT_DEVICE_CPU;
  std::vector<OpValue> args = s.scalars;
  for (size_t i = 0; i < args.size(); ++i)
    if (s.tensors[i].defined()) args[i] = s.tensors[i].unpack(node);
  LentArguments lent(args);
  std::vector<rt::Tensor> results;
  for (const auto& r : s.results) results.push_back(r.unpack(node));
  LentArguments lent_results(std::vector<OpValue>(results.begin(), results.end()));
  std::vector<TensorHandle> grad_handles;
  std::vector<RtTensor*> grad_returns;
  for (const rt::Tensor& g : grads) {
    grad_handles.emplace_back(new_tensor_handle(g));
    grad_returns.push_back(grad_handles.back().get());
  }
  std::vector<RtTensor*> grad_args(args.size(), nullptr);
  DeviceScope scope(s.device);
  RtBackwardCall call;
  std::memset(&call, 0, sizeof call);
  call.struct_size = sizeof call;
  call.host = host_api();
  call.args = lent.values.data();
  call.num_args = lent.values.size();
  call.returns = lent_results.values.data();
  call.num_returns = lent_results.values.size();
  call.grad_returns = grad_returns.data();
  call.needs_grad = s.needs_grad.data();
  call.grad_args = grad_args.data();
  call.device = to_rt_device(s.device);
  call.cuda_stream = scope.stream;
  call.user_data = op.def.user_data;
  RtError error;
  error.message[0] = '\0';
  const RtStatus status = op.def.backward[dt](&call, &error);
  // A failing backward keeps what it allocated (see Note [Failed calls] in op_registry.h).
  if (status != RT_STATUS_OK) throw_kernel_error(op, status, error, "backward", s.device);
  std::vector<rt::Tensor> taken(args.size());
  std::string problem;
  for (size_t i = 0; i < grad_args.size(); ++i) {
    if (!grad_args[i]) continue;
    if (lent.index_of(grad_args[i]) >= 0 || lent_results.index_of(grad_args[i]) >= 0 ||
        std::find(grad_returns.begin(), grad_returns.end(), grad_args[i]) != grad_returns.end()) {
      problem = fmt::format("its backward set a lent handle as the gradient of {}; give a new tensor "
                            "(tensor_empty)", arg_label(op, i));
      continue;
    }
    taken[i] = take_tensor_handle(grad_args[i]);
  }
  if (!problem.empty()) throw rt::Error(fmt::format("plugin {}: {}: {}", op.plugin_id, op.qualified_name, problem));
  TensorList out;
  for (size_t i : s.tensor_args) out.push_back(s.needs_grad[i] ? taken[i] : rt::Tensor());
  return out;
}

void record_backward(const OpInfo& op, const Device& device, const std::vector<OpValue>& args,
                     const std::vector<rt::Tensor>& results) {
  auto saved = std::make_shared<SavedCall>();
  saved->op = &op;
  saved->device = device;
  saved->scalars.resize(args.size());
  saved->tensors.resize(args.size());
  saved->needs_grad.assign(args.size(), 0);
  TensorList inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!is_tensor_type(op.schema.arguments[i].type)) {
      saved->scalars[i] = args[i];
      continue;
    }
    saved->tensor_args.push_back(i);
    if (args[i].index() == 1) {
      const rt::Tensor& t = std::get<1>(args[i]);
      saved->tensors[i] = autograd::SavedTensor(t);
      saved->needs_grad[i] = t.requires_grad() ? 1 : 0;
      inputs.push_back(t);
    } else {
      inputs.push_back(rt::Tensor());
    }
  }
  for (const rt::Tensor& r : results) saved->results.emplace_back(r);
  autograd::CustomFunctionOptions options;
  options.forward_name = op.qualified_name;
  options.release_saved = [saved] {
    for (auto& t : saved->tensors) t.reset();
    for (auto& t : saved->results) t.reset();
  };
  auto node_slot = std::make_shared<const autograd::Node*>(nullptr);
  auto node = autograd::record_custom_function(
      op.backward_name, inputs, results,
      [saved, node_slot](const TensorList& grads) { return run_backward(*saved, *node_slot, grads); },
      std::move(options));
  *node_slot = node.get();
}

}  // namespace

std::vector<rt::Tensor> call_op(std::string_view qualified_name, const std::vector<OpValue>& args) {
  const OpInfo* op = find_op(qualified_name);
  if (!op) {
    std::string known;
    for (const OpInfo* o : registered_ops()) known += (known.empty() ? "" : ", ") + o->qualified_name;
    throw rt::ValueError(fmt::format("no plugin op named '{}' (registered: {}); load its plugin first "
                                     "(rt.ops.load_library(path) in Python, rt::plugin::load_plugin in C++)",
                                     qualified_name, known.empty() ? "none" : known));
  }
  return call_op(*op, args);
}

std::vector<rt::Tensor> call_op(const OpInfo& op, const std::vector<OpValue>& given) {
  std::vector<OpValue> args = bind_arguments(op, given);
  apply_autocast(op, args);
  const Device device = common_device(op, args);
  const RtDeviceType dt = device.is_cuda() ? RT_DEVICE_CUDA : RT_DEVICE_CPU;
  if (!op.has_kernel(dt))
    throw rt::DeviceError(fmt::format("{} has no {} kernel (kernels: {}); move its tensors with .to(\"{}\")",
                                      op.qualified_name, device_type_name(dt), kernel_list(op),
                                      op.has_kernel(RT_DEVICE_CPU) ? "cpu" : "cuda"));
  TensorList tensors;
  bool wants_grad = false;
  for (const OpValue& v : args)
    if (v.index() == 1) {
      tensors.push_back(std::get<1>(v));
      wants_grad = wants_grad || std::get<1>(v).requires_grad();
    }
  wants_grad = wants_grad && rt::GradMode::is_enabled();
  if (wants_grad)
    for (size_t i : op.schema.mutated_arguments()) {
      const rt::Tensor& t = std::get<1>(args[i]);
      if (t.is_leaf() && t.requires_grad())
        throw rt::AutogradError(fmt::format("{}: {} is a leaf tensor that requires grad, which the op would write in "
                                            "place; write a clone of it, or call the op under rt.no_grad()",
                                            op.qualified_name, arg_label(op, i)));
    }

  if (wants_grad && !op.has_backward(dt)) {
    std::string have;
    if (op.has_backward(RT_DEVICE_CPU)) have = "cpu";
    if (op.has_backward(RT_DEVICE_CUDA)) have += have.empty() ? "cuda" : ", cuda";
    throw rt::AutogradError(fmt::format(
        "{}: an argument requires grad, but plugin {} registered no {} backward for it (backwards: {}); call it "
        "under rt.no_grad() or on detached tensors, or register a backward",
        op.qualified_name, op.plugin_id, device_type_name(dt), have.empty() ? "none" : have));
  }

  std::vector<rt::Tensor> results;
  {
    rt::OpGuard guard(op.qualified_name.c_str(), tensors);
    rt::NoGradGuard no_grad;
    LentArguments lent(args);
    std::vector<RtValue> returns(op.schema.returns.size());
    for (RtValue& r : returns) std::memset(&r, 0, sizeof r);
    DeviceScope scope(device);
    RtOpCall call;
    std::memset(&call, 0, sizeof call);
    call.struct_size = sizeof call;
    call.host = host_api();
    call.args = lent.values.data();
    call.num_args = lent.values.size();
    call.returns = returns.data();
    call.num_returns = returns.size();
    call.device = to_rt_device(device);
    call.cuda_stream = scope.stream;
    call.user_data = op.def.user_data;
    RtError error;
    error.message[0] = '\0';
    const RtStatus status = op.def.kernels[dt](&call, &error);
    if (status != RT_STATUS_OK) throw_kernel_error(op, status, error, "kernel", device);
    results = collect_results(op, args, lent, returns);
  }
  for (size_t i : op.schema.mutated_arguments()) std::get<1>(args[i]).bump_version();
  if (wants_grad) record_backward(op, device, args, results);
  return results;
}

}  // namespace rt::plugin
