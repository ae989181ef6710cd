// The fused optimizer updates on the CPU: the adam_step / sgd_step stubs' CPU kernels (one pass
// per parameter at the CPU's instruction-set level, kernels/cpu/isa/optimizer_step.cpp) and the
// group calls fused_adam_ / fused_sgd_ (rt/optim/functional.h), which run a whole parameter group
// as one op and one parallel pass.
#include <cmath>
#include <string>
#include <vector>

#include "cpu/isa_kernels.h"
#include "ops/dispatch_stubs.h"
#include "ops/isa_loops.h"
#include "options_state.h"
#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"
#include "rt/optim/functional.h"

namespace rt::optim {

namespace detail {
bool states_fit(const Tensor& p, std::initializer_list<const Tensor*> states) {
  for (const Tensor* s : states)
    if (s->defined() && !(s->dtype() == p.dtype() && s->device() == p.device() && s->sizes() == p.sizes() &&
                          s->is_contiguous()))
      return false;
  return true;
}
}  // namespace detail

namespace {

void check_like(const Tensor& p, const Tensor& t, const char* op, const char* name) {
  if (t.dtype() != p.dtype() || t.sizes() != p.sizes() || !t.is_contiguous() || !t.is_cpu())
    throw ValueError(std::string(op) + " on the CPU: " + name + " must be a contiguous CPU tensor of the parameter's " +
                     "sizes and dtype; optimizer state and gradients are shaped like the parameter");
}

template <typename T>
T* ptr(const Tensor& t) { return t.defined() ? static_cast<T*>(t.raw_data()) : nullptr; }

template <typename T>
cpu::AdamStepArgs<T> adam_args(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& vmax, const Tensor& g,
                               const cuda_kernels::AdamStepParams& h, bool maximize) {
  cpu::AdamStepArgs<T> a = cpu::adam_constants<T>(h.lr, h.beta1, h.beta2, h.eps, h.weight_decay,
                                                  h.decoupled_weight_decay, maximize, h.step);
  a.param = ptr<T>(p);
  a.exp_avg = ptr<T>(m);
  a.exp_avg_sq = ptr<T>(v);
  a.max_exp_avg_sq = ptr<T>(vmax);
  a.grad = ptr<T>(g);
  return a;
}

template <typename T>
cpu::SgdStepArgs<T> sgd_args(const Tensor& p, const Tensor& buf, const Tensor& g, const cuda_kernels::SgdStepParams& o,
                             bool maximize) {
  cpu::SgdStepArgs<T> a = cpu::sgd_constants<T>(o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov,
                                                o.first_step, maximize);
  a.param = ptr<T>(p);
  a.momentum_buffer = o.momentum != 0.0 ? ptr<T>(buf) : nullptr;
  a.grad = ptr<T>(g);
  return a;
}

void require_float(const Tensor& p, const char* op) {
  if (p.dtype() != kFloat32 && p.dtype() != kFloat64)
    throw DTypeError(std::string(op) + " on the CPU takes float32 or float64 parameters, got " +
                     std::string(dtype_name(p.dtype())) + "; other dtypes take the optimizers' chain of ops");
}

void adam_step_cpu(const Tensor& p, const Tensor& m, const Tensor& v, const Tensor& vmax, const Tensor& g,
                   const cuda_kernels::AdamStepParams& h) {
  const char* op = h.decoupled_weight_decay ? "adamw_step" : "adam_step";
  require_float(p, op);
  check_like(p, p, op, "param");
  check_like(p, g, op, "grad");
  check_like(p, m, op, "exp_avg");
  check_like(p, v, op, "exp_avg_sq");
  if (vmax.defined()) check_like(p, vmax, op, "max_exp_avg_sq");
  const cpu::IsaKernels& k = cpu::isa_kernels();
  if (p.dtype() == kFloat32) {
    const auto a = adam_args<float>(p, m, v, vmax, g, h, false);
    rt::detail::parallel_ranges(p.numel(), [&](int64_t b, int64_t e) { k.adam_f32(a, b, e); });
  } else {
    const auto a = adam_args<double>(p, m, v, vmax, g, h, false);
    rt::detail::parallel_ranges(p.numel(), [&](int64_t b, int64_t e) { k.adam_f64(a, b, e); });
  }
}

void sgd_step_cpu(const Tensor& p, const Tensor& buf, const Tensor& g, const cuda_kernels::SgdStepParams& o) {
  require_float(p, "sgd_step");
  check_like(p, p, "sgd_step", "param");
  check_like(p, g, "sgd_step", "grad");
  if (o.momentum != 0.0) check_like(p, buf, "sgd_step", "momentum_buffer");
  const cpu::IsaKernels& k = cpu::isa_kernels();
  if (p.dtype() == kFloat32) {
    const auto a = sgd_args<float>(p, buf, g, o, false);
    rt::detail::parallel_ranges(p.numel(), [&](int64_t b, int64_t e) { k.sgd_f32(a, b, e); });
  } else {
    const auto a = sgd_args<double>(p, buf, g, o, false);
    rt::detail::parallel_ranges(p.numel(), [&](int64_t b, int64_t e) { k.sgd_f64(a, b, e); });
  }
}

RT_REGISTER_KERNEL(dispatch::adam_step, DeviceType::CPU, adam_step_cpu);
RT_REGISTER_KERNEL(dispatch::sgd_step, DeviceType::CPU, sgd_step_cpu);

// ---- whole groups ------------------------------------------------------------------------
// One piece of a group's pass: elements [begin, end) of parameter `index`.
struct Piece {
  size_t index;
  int64_t begin, end;
};
constexpr int64_t kPieceElements = 65536;

// Runs run(index, begin, end) over every parameter's elements: parameters cut into pieces, the
// pieces spread over the threads when there is enough work.
template <typename Run>
void for_each_piece(const std::vector<int64_t>& sizes, Run&& run) {
  std::vector<Piece> pieces;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (int64_t b = 0; b < sizes[i]; b += kPieceElements) pieces.push_back({i, b, std::min(sizes[i], b + kPieceElements)});
    total += sizes[i];
  }
  const int64_t n = int64_t(pieces.size());
  if (total >= cpu::kParallelGrain && cpu::num_threads() > 1 && n > 1) {
#pragma omp parallel for num_threads(int(std::min<int64_t>(cpu::num_threads(), n))) schedule(dynamic, 1)
    for (int64_t j = 0; j < n; ++j) run(pieces[size_t(j)].index, pieces[size_t(j)].begin, pieces[size_t(j)].end);
  } else {
    for (const Piece& pc : pieces) run(pc.index, pc.begin, pc.end);
  }
}

void require_lengths(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (const auto& [name, size] : lists)
    if (size != n)
      throw ValueError(std::string(op) + ": " + name + " has " + std::to_string(size) + " tensors for " +
                       std::to_string(n) + " parameters; pass one per parameter");
}

bool cpu_pass_fits(const Tensor& p, const Tensor& g, std::initializer_list<const Tensor*> states) {
  return p.is_cpu() && detail::fusable(p, g) && g.sizes() == p.sizes() && detail::states_fit(p, states);
}

// The step counter += 1 as step.add_(1) computes it, without an op per parameter; its new value.
double increment_step(const Tensor& step) {
  if (step.is_cpu() && step.dtype() == kFloat32 && step.numel() == 1) {
    float* s = static_cast<float*>(step.raw_data());
    *s = *s + 1.f;
    step.bump_version();
    return double(*s);
  }
  Tensor t = step;
  t.add_(1);
  return t.item<double>();
}

}  // namespace

void fused_adam_(const AdamGroupTensors& t, const AdamStepOptions& h, bool maximize) {
  const size_t n = t.params.size();
  const bool amsgrad = !t.max_exp_avg_sqs.empty();
  require_lengths("fused_adam_", n, {{"grads", t.grads.size()}, {"exp_avgs", t.exp_avgs.size()},
                                     {"exp_avg_sqs", t.exp_avg_sqs.size()}, {"steps", t.steps.size()}});
  if (amsgrad) require_lengths("fused_adam_", n, {{"max_exp_avg_sqs", t.max_exp_avg_sqs.size()}});
  if (n == 0) return;
  NoGradGuard no_grad;
  OpGuard guard("_fused_adam_", t.params);
  std::vector<cpu::AdamStepArgs<float>> f32;
  std::vector<cpu::AdamStepArgs<double>> f64;
  std::vector<int64_t> sizes;
  std::vector<std::pair<bool, size_t>> where;  // per fused parameter: float64?, index into f32/f64
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = t.params[i];
    const Tensor vmax = amsgrad ? t.max_exp_avg_sqs[i] : Tensor();
    const double step = increment_step(t.steps[i]);
    if (!(step >= 1.0))
      throw ValueError("fused_adam_: step counts must be >= 0 before the step, got " + std::to_string(step - 1));
    const cuda_kernels::AdamStepParams params{h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.decoupled_weight_decay, step};
    if (!cpu_pass_fits(p, t.grads[i], {&t.exp_avgs[i], &t.exp_avg_sqs[i], &vmax})) {
      adam_step_(p, t.exp_avgs[i], t.exp_avg_sqs[i], vmax, maximize ? rt::neg(t.grads[i]) : t.grads[i], h, step);
      continue;
    }
    if (p.dtype() == kFloat32) {
      where.emplace_back(false, f32.size());
      f32.push_back(adam_args<float>(p, t.exp_avgs[i], t.exp_avg_sqs[i], vmax, t.grads[i], params, maximize));
    } else {
      where.emplace_back(true, f64.size());
      f64.push_back(adam_args<double>(p, t.exp_avgs[i], t.exp_avg_sqs[i], vmax, t.grads[i], params, maximize));
    }
    sizes.push_back(p.numel());
  }
  const cpu::IsaKernels& k = cpu::isa_kernels();
  for_each_piece(sizes, [&](size_t j, int64_t b, int64_t e) {
    const auto [wide, idx] = where[j];
    if (wide) k.adam_f64(f64[idx], b, e);
    else k.adam_f32(f32[idx], b, e);
  });
}

void fused_sgd_(const SgdGroupTensors& t, const SGDOptions& o, bool maximize) {
  const size_t n = t.params.size();
  const bool momentum = o.momentum != 0.0;
  require_lengths("fused_sgd_", n, {{"grads", t.grads.size()}});
  if (momentum) require_lengths("fused_sgd_", n, {{"momentum_buffers", t.momentum_buffers.size()}, {"first", t.first.size()}});
  if (n == 0) return;
  NoGradGuard no_grad;
  OpGuard guard("_fused_sgd_", t.params);
  std::vector<cpu::SgdStepArgs<float>> f32;
  std::vector<cpu::SgdStepArgs<double>> f64;
  std::vector<int64_t> sizes;
  std::vector<std::pair<bool, size_t>> where;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = t.params[i];
    const Tensor buf = momentum ? t.momentum_buffers[i] : Tensor();
    const bool first = momentum && t.first[i];
    if (!cpu_pass_fits(p, t.grads[i], {&buf}) || (momentum && !buf.defined())) {
      sgd_step_(p, buf, maximize ? rt::neg(t.grads[i]) : t.grads[i], o, first);
      continue;
    }
    const cuda_kernels::SgdStepParams params{o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov, first};
    if (p.dtype() == kFloat32) {
      where.emplace_back(false, f32.size());
      f32.push_back(sgd_args<float>(p, buf, t.grads[i], params, maximize));
    } else {
      where.emplace_back(true, f64.size());
      f64.push_back(sgd_args<double>(p, buf, t.grads[i], params, maximize));
    }
    sizes.push_back(p.numel());
  }
  const cpu::IsaKernels& k = cpu::isa_kernels();
  for_each_piece(sizes, [&](size_t j, int64_t b, int64_t e) {
    const auto [wide, idx] = where[j];
    if (wide) k.sgd_f64(f64[idx], b, e);
    else k.sgd_f32(f32[idx], b, e);
  });
}

}  // namespace rt::optim
