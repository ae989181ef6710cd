#include "harness.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <exception>
#include <set>

#include "rt/cuda.h"

namespace rt::op_check {
namespace {

bool wants_grad(const OpCase& c, size_t i) { return i < c.grad.size() && c.grad[i]; }

TensorList prepare_inputs(const OpCase& c, Device device) {
  TensorList out;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Tensor t = (device.is_cpu() ? c.inputs[i].clone() : c.inputs[i].to(device)).detach();
    if (wants_grad(c, i)) t.requires_grad_();
    out.push_back(t);
  }
  return out;
}

// One weight per output that takes part in backward (undefined for the others), on the CPU.
TensorList make_weights(const TensorList& outputs) {
  TensorList w;
  for (const Tensor& o : outputs)
    w.push_back(o.defined() && o.requires_grad() ? rt::randn(o.sizes()).to(o.dtype()) : Tensor());
  return w;
}

void backprop(const TensorList& outputs, const TensorList& weights, Device device) {
  Tensor loss;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!weights[i].defined()) continue;
    Tensor term = (outputs[i] * weights[i].to(device)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  if (loss.defined()) loss.backward();
}

std::string describe_inputs(const OpCase& c, const TensorList& outputs, std::string& dtypes) {
  std::string shapes;
  std::set<std::string> seen;
  auto add_dtype = [&](ScalarType t) {
    const std::string n(dtype_name(t));
    if (seen.insert(n).second) dtypes += (dtypes.empty() ? "" : ",") + n;
  };
  for (const Tensor& t : c.inputs) {
    shapes += (shapes.empty() ? "" : " ") + format_shape(t.sizes());
    add_dtype(t.dtype());
  }
  if (c.inputs.empty()) {
    for (const Tensor& o : outputs)
      if (o.defined()) {
        shapes = "-> " + format_shape(o.sizes());
        add_dtype(o.dtype());
        break;
      }
  }
  return shapes;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

Bound bound(Tol tol, ScalarType dt) {
  if (tol == Tol::Exact || !is_floating(dt)) return {0.0, 0.0};
  const int k = int(tol) - int(Tol::Pointwise);  // 0 pointwise, 1 reduction, 2 matmul, 3 model
  switch (dt) {
    case kFloat64: {
      static constexpr Bound b[] = {{1e-12, 1e-12}, {1e-10, 1e-10}, {1e-10, 1e-10}, {1e-8, 1e-8}};
      return b[k];
    }
    case kFloat32: {
      static constexpr Bound b[] = {{1e-6, 1e-5}, {1e-5, 1e-4}, {1e-4, 1e-4}, {1e-4, 1e-3}};
      return b[k];
    }
    case kFloat16: {
      static constexpr Bound b[] = {{1e-2, 1e-2}, {2e-2, 2e-2}, {2e-2, 2e-2}, {5e-2, 5e-2}};
      return b[k];
    }
    default: {  // bfloat16: 8 bits of mantissa
      static constexpr Bound b[] = {{2e-2, 2e-2}, {4e-2, 4e-2}, {4e-2, 4e-2}, {1e-1, 1e-1}};
      return b[k];
    }
  }
}

void compare_into(CaseResult& r, const std::string& what, const Tensor& cpu, const Tensor& gpu, Tol tol) {
  auto fail = [&](const std::string& msg) {
    if (r.problem.empty()) r.problem = what + ": " + msg;
  };
  if (!cpu.defined() || !gpu.defined()) {
    if (cpu.defined() != gpu.defined()) fail(std::string("defined on ") + (cpu.defined() ? "cpu" : "cuda") + " only");
    return;
  }
  if (cpu.sizes() != gpu.sizes()) return fail("shape " + format_shape(gpu.sizes()) + " on cuda, " + format_shape(cpu.sizes()) + " on cpu");
  if (cpu.dtype() != gpu.dtype())
    return fail("dtype " + std::string(dtype_name(gpu.dtype())) + " on cuda, " + std::string(dtype_name(cpu.dtype())) + " on cpu");
  const Bound b = bound(tol, cpu.dtype());
  const std::vector<double> c = cpu.detach().to_vector<double>(), g = gpu.detach().to_vector<double>();
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < c.size(); ++i) {
    const double x = c[i], y = g[i];
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
    } else {
      const double abs_err = std::abs(x - y);
      r.max_abs = std::max(r.max_abs, abs_err);
      if (std::abs(x) > std::max(b.atol, 1e-30)) r.max_rel = std::max(r.max_rel, abs_err / std::abs(x));
      ok = tol == Tol::Exact || !is_floating(cpu.dtype()) ? x == y : abs_err <= b.atol + b.rtol * std::abs(x);
    }
    if (!ok && bad++ == 0) first = int64_t(i);
  }
  if (bad > 0)
    fail(std::to_string(bad) + " of " + std::to_string(c.size()) + " elements differ" +
         (b.atol == 0 && b.rtol == 0 ? std::string(" (exact match required)")
                                     : " beyond " + num(b.atol) + " + " + num(b.rtol) + " * |cpu|") +
         "; first at flat index " + std::to_string(first) + ": cpu " + num(c[size_t(first)]) + ", cuda " +
         num(g[size_t(first)]));
}

void OpCheck::run(const OpCase& c) {
  const std::string name = c.variant.empty() ? c.op : c.op + " " + c.variant;
  if (!filter_.empty() && name.find(filter_) == std::string::npos) return;
  if (max_elements_ > 0) {
    int64_t elements = 0;
    for (const Tensor& t : c.inputs) elements += t.numel();
    if (elements > max_elements_) {
      std::printf("SKIP  %-40s %" PRId64 " input elements, more than --max-elements %" PRId64 "\n", name.c_str(),
                  elements, max_elements_);
      skipped_.push_back(name);
      return;
    }
  }

  CaseResult r;
  TensorList cpu_in, cpu_out, weights, gpu_in, gpu_out;
  try {
    cpu_in = prepare_inputs(c, Device::cpu());
    rt::manual_seed(c.seed);
    cpu_out = c.fn(cpu_in, Device::cpu());
    weights = make_weights(cpu_out);
    backprop(cpu_out, weights, Device::cpu());
  } catch (const std::exception& e) {
    r.problem = std::string("the CPU run threw (a broken case): ") + e.what();
  }
  if (r.problem.empty()) {
    try {
      gpu_in = prepare_inputs(c, device_);
      rt::manual_seed(c.seed);
      gpu_out = c.fn(gpu_in, device_);
      backprop(gpu_out, weights, device_);
      if (device_.is_cuda()) rt::cuda::synchronize(device_.index);
    } catch (const std::exception& e) {
      r.problem = "the " + device_.str() + " run threw: " + e.what();
    }
  }
  if (r.problem.empty()) {
    if (gpu_out.size() != cpu_out.size())
      r.problem = std::to_string(gpu_out.size()) + " outputs on cuda, " + std::to_string(cpu_out.size()) + " on cpu";
    for (size_t i = 0; r.problem.empty() && i < cpu_out.size(); ++i) {
      const std::string what = "output " + std::to_string(i);
      if (!c.host_outputs && gpu_out[i].defined() && gpu_out[i].device() != device_)
        r.problem = what +  " of the " + device_.str() + " run is on " + gpu_out[i].device().str();
      compare_into(r, what, cpu_out[i], gpu_out[i], c.tol);
    }
    for (size_t i = 0; i < cpu_in.size(); ++i) {
      if (!wants_grad(c, i)) continue;
      const std::string what = "grad of input " + std::to_string(i);
      const Tensor g = gpu_in[i].grad();
      if (r.problem.empty() && g.defined() && g.device() != device_)  // a backward that built its result on the host
        r.problem = what + " of the " + device_.str() + " run is on " + g.device().str();
      compare_into(r, what, cpu_in[i].grad(), g, c.tol);
    }
  }

  std::string dtypes;
  const std::string shapes = describe_inputs(c, cpu_out, dtypes);
  const bool ok = r.problem.empty();
  std::printf("%s  %-40s %-34s %-24s abs %.2e  rel %.2e%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), shapes.c_str(),
              dtypes.c_str(), r.max_abs, r.max_rel, ok ? "" : "  ", r.problem.c_str());
  std::fflush(stdout);
  if (ok) ++passed_;
  else failed_.push_back(name + " " + shapes + " " + dtypes);
}

int OpCheck::summary() const {
  std::printf("\nop check: %d cases, %d passed, %zu failed", passed_ + int(failed_.size()), passed_, failed_.size());
  if (!skipped_.empty()) std::printf(", %zu skipped (more input elements than --max-elements)", skipped_.size());
  std::printf("\n");
  for (const std::string& f : failed_) std::printf("  FAILED: %s\n", f.c_str());
  return failed_.empty() ? 0 : 1;
}

}  // namespace rt::op_check
