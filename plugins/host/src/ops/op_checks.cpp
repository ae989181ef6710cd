#include "rt/plugin_host/op_checks.h"

#include <fmt/format.h>

#include <cmath>
#include <exception>

#include "rt/autograd/engine.h"
#include "rt/autograd/grad_mode.h"
#include "rt/cuda.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"

namespace rt::plugin {
namespace {

bool is_tensor(const OpValue& v) { return v.index() == 1; }
const rt::Tensor& tensor_of(const OpValue& v) { return std::get<1>(v); }

// Runs `body`, turning an exception into the check's failure.
template <typename F>
OpCheck run_check(const char* name, F&& body) {
  OpCheck c;
  c.name = name;
  try {
    body(c);
  } catch (const std::exception& e) {
    c.passed = false;
    c.detail = fmt::format("the op threw: {}", e.what());
  }
  return c;
}

std::vector<OpValue> detached_copies(const std::vector<OpValue>& args) {
  std::vector<OpValue> out = args;
  for (OpValue& v : out)
    if (is_tensor(v)) v = tensor_of(v).detach().clone();
  return out;
}

std::vector<double> host_values(const rt::Tensor& t) { return t.detach().to_vector<double>(); }

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

bool shares_memory(const rt::Tensor& a, const rt::Tensor& b) {
  if (!a.defined() || !b.defined() || a.nbytes() == 0 || b.nbytes() == 0) return false;
  const auto* a0 = static_cast<const char*>(a.storage().data());
  const auto* b0 = static_cast<const char*>(b.storage().data());
  return a0 && a0 == b0;
}

std::vector<OpValue> with_tensors(const std::vector<OpValue>& args, const TensorList& tensors,
                                  const std::vector<size_t>& where) {
  std::vector<OpValue> out = args;
  for (size_t k = 0; k < where.size(); ++k) out[where[k]] = tensors[k];
  return out;
}

std::vector<size_t> floating_tensor_args(const std::vector<OpValue>& args) {
  std::vector<size_t> where;
  for (size_t i = 0; i < args.size(); ++i)
    if (is_tensor(args[i]) && tensor_of(args[i]).is_floating_point()) where.push_back(i);
  return where;
}

// sum(result_k * w_k) over the floating results, in float64: what gradcheck differentiates.
rt::Tensor weighted_sum(const std::vector<rt::Tensor>& results, const std::vector<rt::Tensor>& weights) {
  rt::Tensor total;
  for (size_t k = 0; k < results.size(); ++k) {
    if (!results[k].is_floating_point()) continue;
    rt::Tensor term = rt::sum(rt::mul(results[k].to(rt::kFloat64), weights[k]));
    total = total.defined() ? rt::add(total, term) : term;
  }
  return total;
}

}  // namespace

std::optional<std::vector<OpValue>> find_sample_arguments(const OpInfo& op) {
  if (!op.has_kernel(RT_DEVICE_CPU)) return std::nullopt;
  const std::vector<std::vector<rt::Shape>> patterns = {
      {{3, 4}}, {{3, 4}, {4}}, {{4}}, {{2, 3, 4}}, {{2, 3, 4}, {4}}};
  for (const auto& pattern : patterns) {
    std::vector<OpValue> args;
    size_t tensor_index = 0;
    for (const OpArgument& a : op.schema.arguments) {
      if (a.type == ArgType::Tensor || a.type == ArgType::OptionalTensor) {
        const rt::Shape& shape = pattern[std::min(tensor_index++, pattern.size() - 1)];
        args.emplace_back(rt::rand(shape, rt::TensorOptions(rt::kFloat64)) * 2.0 - 1.0);
      } else if (a.default_value) {
        std::visit([&](const auto& d) { args.emplace_back(d); }, *a.default_value);
      } else if (a.type == ArgType::Float) {
        args.emplace_back(0.5);
      } else if (a.type == ArgType::Int) {
        args.emplace_back(int64_t(2));
      } else {
        args.emplace_back(false);
      }
    }
    try {
      rt::NoGradGuard no_grad;
      call_op(op, detached_copies(args));
      return args;
    } catch (const std::exception&) {
      // this pattern does not fit the op; try the next
    }
  }
  return std::nullopt;
}

OpCheck check_op_schema_mutation(const OpInfo& op, const std::vector<OpValue>& args) {
  return run_check("schema: mutation", [&](OpCheck& c) {
    std::vector<OpValue> run = detached_copies(args);
    std::vector<std::vector<double>> before(run.size());
    for (size_t i = 0; i < run.size(); ++i)
      if (is_tensor(run[i])) before[i] = host_values(tensor_of(run[i]));
    rt::NoGradGuard no_grad;
    call_op(op, run);
    std::string problems;
    for (size_t i = 0; i < run.size(); ++i) {
      if (!is_tensor(run[i]) || op.schema.arguments[i].alias.write) continue;
      if (!same_values(before[i], host_values(tensor_of(run[i]))))
        problems += fmt::format("{}the op wrote argument '{}', which its schema does not mark Tensor(a!)",
                                problems.empty() ? "" : "; ", op.schema.arguments[i].name);
    }
    c.passed = problems.empty();
    c.detail = c.passed ? "arguments not marked (a!) came back unchanged" : problems;
  });
}

OpCheck check_op_schema_aliasing(const OpInfo& op, const std::vector<OpValue>& args) {
  return run_check("schema: aliasing", [&](OpCheck& c) {
    std::vector<OpValue> run = detached_copies(args);
    rt::NoGradGuard no_grad;
    std::vector<rt::Tensor> results = call_op(op, run);
    std::string problems;
    for (size_t r = 0; r < results.size(); ++r)
      for (size_t i = 0; i < run.size(); ++i) {
        if (!is_tensor(run[i]) || op.schema.aliased_argument(r) == int(i)) continue;
        if (shares_memory(results[r], tensor_of(run[i])))
          problems += fmt::format("{}result {} shares memory with argument '{}', but the schema does not declare it "
                                  "Tensor(a) of that argument",
                                  problems.empty() ? "" : "; ", r, op.schema.arguments[i].name);
      }
    c.passed = problems.empty();
    c.detail = c.passed ? "results share memory only with the arguments the schema names" : problems;
  });
}

OpCheck check_op_autograd_registered(const OpInfo& op, const std::vector<OpValue>& args) {
  OpCheck c;
  c.name = "autograd registered";
  if (floating_tensor_args(args).empty()) {
    c.passed = c.skipped = true;
    c.detail = "no floating tensor argument: nothing to differentiate";
    return c;
  }
  bool cuda = false;
  for (const OpValue& v : args) cuda = cuda || (is_tensor(v) && tensor_of(v).is_cuda());
  const RtDeviceType d = cuda ? RT_DEVICE_CUDA : RT_DEVICE_CPU;
  c.passed = op.has_backward(d);
  c.detail = c.passed ? fmt::format("a {} backward is registered", cuda ? "CUDA" : "CPU")
                      : fmt::format("no {} backward: calling it on tensors that require grad raises", cuda ? "CUDA" : "CPU");
  return c;
}

OpCheck op_gradcheck(const OpInfo& op, const std::vector<OpValue>& args_in, double atol, double rtol) {
  return run_check("gradcheck", [&](OpCheck& c) {
    const std::vector<size_t> where = floating_tensor_args(args_in);
    const RtDeviceType d = !where.empty() && tensor_of(args_in[where[0]]).is_cuda() ? RT_DEVICE_CUDA : RT_DEVICE_CPU;
    if (where.empty() || !op.has_backward(d)) {
      c.passed = c.skipped = true;
      c.detail = where.empty() ? "no floating tensor argument" : "not differentiable";
      return;
    }
    TensorList inputs;
    for (size_t i : where) inputs.push_back(tensor_of(args_in[i]).detach().to(rt::kFloat64).requires_grad_());
    std::vector<OpValue> args = with_tensors(args_in, inputs, where);
    std::vector<rt::Tensor> results;
    {
      rt::NoGradGuard no_grad;
      results = call_op(op, args);
    }
    std::vector<rt::Tensor> weights;
    for (const rt::Tensor& r : results)
      weights.push_back(rt::rand(r.sizes(), rt::TensorOptions(rt::kFloat64).with_device(r.device())) * 2.0 - 1.0);
    rt::EnableGradGuard grad_on;
    rt::Tensor loss = weighted_sum(call_op(op, args), weights);
    if (!loss.defined()) {
      c.passed = c.skipped = true;
      c.detail = "no floating result";
      return;
    }
    TensorList analytic = rt::autograd::grad({loss}, inputs, {}, false, false, true);
    const double eps = 1e-6;
    double worst = 0;
    std::string failure;
    rt::NoGradGuard no_grad;
    for (size_t k = 0; k < inputs.size() && failure.empty(); ++k) {
      rt::Tensor base = inputs[k].detach();
      const std::vector<double> a = analytic[k].defined() ? host_values(analytic[k]) : std::vector<double>(base.numel(), 0.0);
      rt::Tensor flat = base.cpu().contiguous().clone();
      for (int64_t e = 0; e < flat.numel(); ++e) {
        auto eval = [&](double delta) {
          rt::Tensor p = flat.clone();
          p.data_ptr<double>()[e] += delta;
          TensorList moved = inputs;
          moved[k] = p.to(base.device()).view(base.sizes());
          return weighted_sum(call_op(op, with_tensors(args, moved, where)), weights).item<double>();
        };
        const double numeric = (eval(eps) - eval(-eps)) / (2 * eps);
        const double err = std::fabs(numeric - a[size_t(e)]);
        worst = std::max(worst, err);
        if (failure.empty() && err > atol + rtol * std::fabs(numeric))
          failure = fmt::format("argument '{}', element {}: backward gives {}, finite differences {}",
                                op.schema.arguments[where[k]].name, e, a[size_t(e)], numeric);
      }
    }
    c.passed = failure.empty();
    c.detail = c.passed ? fmt::format("float64 central differences agree (largest difference {:.3g})", worst) : failure;
  });
}

OpCheck check_op_cpu_vs_cuda(const OpInfo& op, const std::vector<OpValue>& args, double tolerance) {
  return run_check("cpu vs cuda", [&](OpCheck& c) {
    if (!op.has_kernel(RT_DEVICE_CUDA) || !op.has_kernel(RT_DEVICE_CPU) || !rt::cuda::is_available()) {
      c.passed = c.skipped = true;
      c.detail = !rt::cuda::is_available() ? "no CUDA device" : "the op lacks a CPU or a CUDA kernel";
      return;
    }
    std::vector<OpValue> on_cpu = detached_copies(args), on_cuda = detached_copies(args);
    for (size_t i = 0; i < args.size(); ++i) {
      if (!is_tensor(args[i])) continue;
      on_cpu[i] = tensor_of(on_cpu[i]).cpu();
      on_cuda[i] = tensor_of(on_cuda[i]).cuda();
    }
    rt::NoGradGuard no_grad;
    std::vector<rt::Tensor> a = call_op(op, on_cpu), b = call_op(op, on_cuda);
    double worst = 0;
    for (size_t r = 0; r < a.size(); ++r) {
      const std::vector<double> x = host_values(a[r]), y = host_values(b[r].cpu());
      if (x.size() != y.size()) throw rt::ValueError(fmt::format("result {} has {} elements on the CPU, {} on CUDA", r,
                                                                 x.size(), y.size()));
      for (size_t e = 0; e < x.size(); ++e) worst = std::max(worst, std::fabs(x[e] - y[e]) / (1 + std::fabs(x[e])));
    }
    c.passed = worst <= tolerance;
    c.detail = fmt::format("largest relative difference {:.3g} (tolerance {:.3g})", worst, tolerance);
  });
}

std::vector<OpCheck> check_op(const OpInfo& op, const std::vector<OpValue>& args) {
  return {check_op_schema_mutation(op, args), check_op_schema_aliasing(op, args),
          check_op_autograd_registered(op, args), op_gradcheck(op, args), check_op_cpu_vs_cuda(op, args)};
}

}  // namespace rt::plugin
