// Losses: cross_entropy (fused log_softmax + nll), nll_loss, mse_loss, binary_cross_entropy_with_logits.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "../amp/autocast_policy.h"
#include "composed.h"
#include "dispatch_stubs.h"
#include "op_device.h"
#include "ops/cpu_view.h"
#include "inplace.h"
#include "isa_loops.h"
#include "nn_rows.h"
#include "pointwise.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::SavedTensor;
using namespace nnops;

namespace {

enum class Reduction { None, Mean, Sum };

Reduction parse_reduction(const std::string& r, const char* op) {
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (r == "none") return Reduction::None;
  throw ValueError(std::string(op) + ": reduction must be 'mean', 'sum' or 'none', got '" + r + "'" + module_context());
}

// Sum in double over fixed-size chunks, so the result never depends on the thread count.
template <typename V>
double stable_sum(const V* v, int64_t n) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> part(size_t(std::max<int64_t>(chunks, 1)), 0.0);
  parallel_for(chunks, n, [&](int64_t c) {
    double s = 0;
    for (int64_t i = c * kChunk, e = std::min(n, (c + 1) * kChunk); i < e; ++i) s += double(compute_t<V>(v[i]));
    part[size_t(c)] = s;
  });
  double s = 0;
  for (double p : part) s += p;
  return s;
}

Tensor scalar_of(double v, ScalarType dt) { return full({}, v, dt); }

// Reduces a contiguous elementwise loss to the requested form.
Tensor reduce_loss(const Tensor& el, Reduction red) {
  if (red == Reduction::None) return el;
  double s = 0;
  visit_dtype(el.dtype(), [&]<typename T>() { s = stable_sum(el.data_ptr<T>(), el.numel()); });
  return scalar_of(red == Reduction::Mean ? s / double(el.numel()) : s, el.dtype());
}

// Gradient of the elementwise losses per element: g itself (none) or a 0-dim scale.
Tensor per_element_grad(const Tensor& g, Reduction red, int64_t numel) {
  return red == Reduction::Mean ? g * (1.0 / double(numel)) : g;
}

// ---- class-index losses --------------------------------------------------------------------

struct ClassLayout {
  int64_t n = 1, c = 1, inner = 1;
  Shape target_shape;
};

ClassLayout check_class_inputs(const char* op, const Tensor& input, const Tensor& target, const Tensor& weight,
                               int64_t ignore_index) {
  const Shape& is = input.sizes();
  const Shape& ts = target.sizes();
  if (input.dim() == 0)
    throw_shape_error(op, "input must have shape [C], [N, C] or [N, C, d1, ...], got a 0-dim tensor");
  if (!is_integral(target.dtype()))
    throw DTypeError(std::string(op) + ": target must hold int64 class indices, got dtype " +
                     std::string(dtype_name(target.dtype())) + module_context() +
                     ". Hint: class-probability targets are not supported; pass target.argmax(1) or .to(rt::kInt64)");
  ClassLayout L;
  if (input.dim() == 1) {
    L.c = is[0];
    if (target.dim() != 0)
      throw_shape_error(op, "input " + format_shape(is) + " is one unbatched sample, so target must be 0-dim, got " +
                                format_shape(ts));
  } else {
    L.n = is[0];
    L.c = is[1];
    Shape expect{is[0]};
    for (size_t d = 2; d < is.size(); ++d) expect.push_back(is[d]), L.inner *= is[d];
    if (ts != expect) {
      const bool batch = !ts.empty() && ts[0] != is[0];
      throw_shape_error(op,
                        "input " + format_shape(is) + " and target " + format_shape(ts) + " do not match: " +
                            (batch ? "batch size " + std::to_string(is[0]) + " (dimension 0 of input) != " +
                                         std::to_string(ts[0]) + " (dimension 0 of target)"
                                   : "target must have shape " + format_shape(expect)),
                        "target holds one class index per sample: shape [N, d1, ...] for input [N, C, d1, ...]");
    }
  }
  L.target_shape = ts;
  if (weight.defined() && (weight.dim() != 1 || weight.size(0) != L.c))
    throw_shape_error(op, "weight should be defined for all " + std::to_string(L.c) +
                              " classes or no classes, but got weight of shape " + format_shape(weight.sizes()) +
                              " for input " + format_shape(is),
                      "weight has shape [C]");
  if (weight.defined() && !is_floating(weight.dtype()))
    throw DTypeError(std::string(op) + ": weight must be floating point, got " + std::string(dtype_name(weight.dtype())));
  return L;
}

void check_targets(const char* op, const int64_t* t, int64_t n, int64_t classes, int64_t ignore_index) {
  for (int64_t i = 0; i < n; ++i)
    if (t[i] != ignore_index && (t[i] < 0 || t[i] >= classes))
      throw IndexError(std::string(op) + ": target " + std::to_string(t[i]) + " is out of bounds for " +
                       std::to_string(classes) + " classes (valid: 0.." + std::to_string(classes - 1) +
                       ", or ignore_index " + std::to_string(ignore_index) + ")" + module_context());
}

struct ClassLoss {
  ClassLayout L;
  int64_t ignore = -100;
  double eps = 0;      // label smoothing
  bool logits = true;  // cross_entropy (log_softmax fused in) vs nll_loss
};

// cross_entropy over float32 rows [S, C] at the CPU's level (kernels/cpu/isa/cross_entropy_rows.cpp): per
// row one read for the max and one for the exp-sum (and sum(w * x) with label smoothing), then the loss
// from those, with sum_c w_c * logp_c = sum(w * x) - lse * sum(w).
void cross_entropy_rows_forward(const ClassLoss& P, const float* x, const int64_t* tgt, const float* w, double* loss,
                                double* wsel, double* lse) {
  const int64_t Cn = P.L.c, S = P.L.n;
  const bool smooth = P.eps > 0;
  std::vector<double> wdot(smooth ? size_t(S) : 0);
  const cpu::IsaKernels& k = cpu::isa_kernels();
  detail::parallel_row_ranges(S, Cn, [&](int64_t r0, int64_t r1) {
    k.log_softmax_stats_f32(lse + r0, smooth ? wdot.data() + r0 : nullptr, x + r0 * Cn, w, r1 - r0, Cn);
  });
  double wsum = double(Cn);
  if (w && smooth) {
    wsum = 0;
    for (int64_t c = 0; c < Cn; ++c) wsum += double(w[c]);
  }
  for (int64_t s = 0; s < S; ++s) {
    const int64_t t = tgt[s];
    if (t == P.ignore) {
      loss[s] = wsel[s] = lse[s] = 0;
      continue;
    }
    const double wt = w ? double(w[t]) : 1.0;
    double l = -(1.0 - P.eps) * wt * (double(x[s * Cn + t]) - lse[s]);
    if (smooth) l -= P.eps / double(Cn) * (wdot[size_t(s)] - lse[s] * wsum);
    loss[s] = l;
    wsel[s] = wt;
  }
}

// Per-sample loss l_s = (1-eps) * -w_t * logp_t + (eps/C) * -sum_c w_c * logp_c; fills lse for logits.
template <typename T>
void class_loss_forward(const ClassLoss& P, const T* x, const int64_t* tgt, const T* w, double* loss, double* wsel,
                        double* lse) {
  if constexpr (std::is_same_v<T, float>)
    if (P.logits && P.L.inner == 1) return cross_entropy_rows_forward(P, x, tgt, w, loss, wsel, lse);
  using C = compute_t<T>;
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t Cn = P.L.c, inner = P.L.inner, S = P.L.n * inner;
  parallel_for(S, S * Cn, [&](int64_t s) {
    const int64_t t = tgt[s];
    if (t == P.ignore) {
      loss[s] = wsel[s] = 0;
      if (lse) lse[s] = 0;
      return;
    }
    const T* xb = x + (s / inner) * Cn * inner + s % inner;
    double shift = 0;
    if (P.logits) {
      C m = -std::numeric_limits<C>::infinity();
#pragma omp simd reduction(max : m)
      for (int64_t c = 0; c < Cn; ++c) m = std::max(m, C(xb[c * inner]));
      A sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < Cn; ++c) sum += A(detail::vexp(C(xb[c * inner]) - m));
      shift = double(m) + std::log(double(sum));
      lse[s] = shift;
    }
    const double wt = w ? double(C(w[t])) : 1.0;
    double l = -(1.0 - P.eps) * wt * (double(C(xb[t * inner])) - shift);
    if (P.eps > 0) {
      double sm = 0;
      for (int64_t c = 0; c < Cn; ++c) sm += (w ? double(C(w[c])) : 1.0) * (double(C(xb[c * inner])) - shift);
      l -= P.eps / double(Cn) * sm;
    }
    loss[s] = l;
    wsel[s] = wt;
  });
}

// d l_s / d x_c = p_c * ((1-eps) w_t + (eps/C) W) - (1-eps) w_t [c == t] - (eps/C) w_c, times the sample's grad.
template <typename T>
void class_loss_backward(const ClassLoss& P, const T* x, const int64_t* tgt, const T* w, const double* lse,
                         const T* g, bool g_per_sample, double g_scale, T* gx) {
  using C = compute_t<T>;
  const int64_t Cn = P.L.c, inner = P.L.inner, S = P.L.n * inner;
  const double k = P.eps / double(Cn);
  double wsum = double(Cn);
  if (w) {
    wsum = 0;
    for (int64_t c = 0; c < Cn; ++c) wsum += double(C(w[c]));
  }
  if constexpr (std::is_same_v<T, float>) {
    if (P.logits && inner == 1) {  // rows at the CPU's level (kernels/cpu/isa/cross_entropy_rows.cpp)
      const cpu::IsaKernels& kern = cpu::isa_kernels();
      detail::parallel_row_ranges(S, Cn, [&](int64_t r0, int64_t r1) {
        for (int64_t s = r0; s < r1; ++s) {
          const int64_t t = tgt[s];
          float* o = gx + s * Cn;
          if (t == P.ignore) {
            std::fill(o, o + Cn, 0.f);
            continue;
          }
          const double gs = (g_per_sample ? double(g[s]) : double(g[0])) * g_scale;
          const double wt = w ? double(w[t]) : 1.0;
          const float pc = float(((1.0 - P.eps) * wt + k * wsum) * gs);
          kern.cross_entropy_backward_row_f32(o, x + s * Cn, w, Cn, float(lse[s]), pc, float(k * gs));
          o[t] -= float((1.0 - P.eps) * wt * gs);
        }
      });
      return;
    }
  }
  parallel_for(S, S * Cn, [&](int64_t s) {
    const int64_t t = tgt[s];
    const int64_t off = (s / inner) * Cn * inner + s % inner;
    if (t == P.ignore) {
      for (int64_t c = 0; c < Cn; ++c) gx[off + c * inner] = T(C(0));
      return;
    }
    const double gs = (g_per_sample ? double(C(g[s])) : double(C(g[0]))) * g_scale;
    const double wt = w ? double(C(w[t])) : 1.0;
    const C l = C(P.logits ? lse[s] : 0.0);
    const C pc = C(P.logits ? ((1.0 - P.eps) * wt + k * wsum) * gs : 0.0);
    const C kg = C(k * gs);
    auto at = [&](int64_t c) {
      const C wc = w ? C(w[c]) : C(1);
      return (P.logits ? detail::vexp(C(x[off + c * inner]) - l) * pc : C(0)) - kg * wc;
    };
#pragma omp simd
    for (int64_t c = 0; c < Cn; ++c) gx[off + c * inner] = T(at(c));
    gx[off + t * inner] = T(at(t) - C((1.0 - P.eps) * wt * gs));
  });
}

// The same on a GPU: one fused kernel each way (kernels/cuda/cross_entropy.h).
Tensor class_loss_cuda(const char* node, const ClassLoss& P, Reduction red, const Tensor& input, const Tensor& target,
                       const Tensor& weight) {
  const ScalarType dt = input.dtype();
  if (!is_floating(dt))
    throw DTypeError(std::string(node) + ": input must be floating point, got " + std::string(dtype_name(dt)) + module_context());
  dispatch::ClassLossArgs a;
  a.x = dense(input, dt);
  a.target = dense(target, kInt64);
  a.weight = weight.defined() ? dense(weight, dt) : Tensor();
  a.lse = P.logits ? make_tensor({P.L.n * P.L.inner}, kFloat64, input.device()) : Tensor();
  a.total_weight = make_tensor({1}, kFloat64, input.device());
  a.ignore_index = P.ignore;
  a.reduction = red == Reduction::None ? dispatch::LossReduction::None
                : red == Reduction::Mean ? dispatch::LossReduction::Mean : dispatch::LossReduction::Sum;
  a.label_smoothing = P.eps;
  a.logits = P.logits;
  Tensor out = make_tensor(red == Reduction::None ? P.L.target_shape : Shape{}, dt, input.device());
  dispatch::class_loss(out.device(), out, a);
  if (autograd::any_requires_grad(input))
    autograd::record(node, {input}, {out}, [a, sx = SavedTensor(a.x)](const TensorList& g) {
      dispatch::ClassLossArgs b = a;
      b.x = sx.unpack();  // checks the input was not modified in place since
      Tensor gx = make_tensor(b.x.sizes(), b.x.dtype(), b.x.device());
      dispatch::class_loss_backward(g[0].device(), gx, dense(g[0], b.x.dtype()), b);
      return TensorList{gx};
    });
  return out;
}

Tensor class_loss(const char* op, const char* node, const Tensor& input, const Tensor& target, const Tensor& weight,
                  int64_t ignore_index, const std::string& reduction, double label_smoothing, bool logits) {
  OpGuard guard(op, input, target, weight);
  const Reduction red = parse_reduction(reduction, op);
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    throw ValueError(std::string(op) + ": label_smoothing must be between 0.0 and 1.0, got " +
                     std::to_string(label_smoothing) + module_context());
  ClassLoss P;
  P.L = check_class_inputs(op, input, target, weight, ignore_index);
  P.ignore = ignore_index;
  P.eps = label_smoothing;
  P.logits = logits;
  const ScalarType dt = input.dtype();
  const int64_t S = P.L.n * P.L.inner;
  if (!detail::op_device(op, input, target, weight).is_cpu()) return class_loss_cuda(node, P, red, input, target, weight);
  Tensor x = dense(input, dt), tgt = dense(target, kInt64);
  Tensor w = weight.defined() ? dense(weight, dt) : Tensor();
  check_targets(op, tgt.data_ptr<int64_t>(), S, P.L.c, ignore_index);
  std::vector<double> loss(static_cast<size_t>(S)), wsel(static_cast<size_t>(S));
  Tensor lse = logits ? make_tensor({S}, kFloat64) : Tensor();
  Tensor out;
  double denom = 1.0;
  visit_float(dt, op, "input", [&]<typename T>() {
    class_loss_forward<T>(P, x.data_ptr<T>(), tgt.data_ptr<int64_t>(), w.defined() ? w.data_ptr<T>() : nullptr,
                          loss.data(), wsel.data(), logits ? lse.data_ptr<double>() : nullptr);
    if (red == Reduction::None) {
      out = make_tensor(P.L.target_shape, dt);
      T* o = out.data_ptr<T>();
      for (int64_t s = 0; s < S; ++s) o[s] = T(compute_t<T>(loss[size_t(s)]));
      return;
    }
    const double total = stable_sum(loss.data(), S);
    if (red == Reduction::Mean) denom = stable_sum(wsel.data(), S);
    out = scalar_of(total / denom, dt);
  });
  if (autograd::any_requires_grad(input))
    autograd::record(node, {input}, {out},
                     [P, red, denom, sx = SavedTensor(x), st = SavedTensor(tgt), sw = SavedTensor(w),
                      sl = SavedTensor(lse)](const TensorList& g) {
                       Tensor xv = sx.unpack(), tv = st.unpack(), wv = sw.defined() ? sw.unpack() : Tensor();
                       Tensor lv = sl.defined() ? sl.unpack() : Tensor();
                       Tensor gx = make_tensor(xv.sizes(), xv.dtype());
                       Tensor gc = dense(g[0], xv.dtype());
                       visit_float(xv.dtype(), "cross_entropy_backward", "gradient", [&]<typename T>() {
                         class_loss_backward<T>(P, xv.data_ptr<T>(), tv.data_ptr<int64_t>(),
                                                wv.defined() ? wv.data_ptr<T>() : nullptr,
                                                lv.defined() ? lv.data_ptr<double>() : nullptr, gc.data_ptr<T>(),
                                                red == Reduction::None, red == Reduction::Mean ? 1.0 / denom : 1.0,
                                                gx.data_ptr<T>());
                       });
                       return TensorList{gx};
                     });
  return out;
}

// ---- elementwise losses --------------------------------------------------------------------

// log(sigmoid(x)), stable for large |x|.
template <typename C>
inline C log_sigmoid(C x) { return std::min(x, C(0)) - std::log1p(detail::vexp(-std::abs(x))); }

// out = f(x, t, a, b) elementwise over out's (the input's) shape, in dtype dt.
template <typename F>
Tensor bce_map(ScalarType dt, const Shape& shape, const Tensor& x, const Tensor& t, const Tensor& a, const Tensor& b, F f) {
  Tensor out = make_tensor(shape, dt);
  cpu::ElementwiseLoop loop = cpu_loop(out, {x, t, a, b});
  visit_float(dt, "binary_cross_entropy_with_logits", "input", [&]<typename T>() {
    using C = compute_t<T>;
    loop.run([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        auto at = [&](int k) { return C(*reinterpret_cast<const T*>(p[k] + i * s[k])); };
        *reinterpret_cast<T*>(p[0] + i * s[0]) = T(C(f(at(1), at(2), at(3), at(4))));
      }
    });
  });
  return out;
}

// mse_loss on a GPU (composed.h), recorded as the same node as on the CPU.
Tensor mse_loss_cuda(const Tensor& input, const Tensor& target, const Tensor& x, const Tensor& t, Reduction red) {
  using namespace detail::composed;
  Tensor out = detail::composed::reduce_loss(mse_elementwise(x, t), red == Reduction::Mean, red == Reduction::Sum);
  if (autograd::any_requires_grad(input, target)) {
    const bool gi = input.requires_grad(), gt = target.requires_grad();
    const int64_t n = numel_of(broadcast_shapes(x.sizes(), t.sizes(), "mse_loss"));
    autograd::record("MseLossBackward0", {input, target}, {out},
                     [red, n, gi, gt, sx = SavedTensor(x), st = SavedTensor(t)](const TensorList& g) {
                       const Tensor gx = mse_backward(sx.unpack(), st.unpack(), per_element_grad(g[0], red, n));
                       return TensorList{gi ? gx : Tensor(), gt ? neg(gx) : Tensor()};
                     });
  }
  return out;
}

// binary_cross_entropy_with_logits on a GPU (composed.h), recorded as the same node as on the CPU.
Tensor bce_with_logits_cuda(const Tensor& input, const Tensor& target, const Tensor& weight, const Tensor& pos_weight,
                            const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw, Reduction red) {
  using namespace detail::composed;
  Tensor out = detail::composed::reduce_loss(bce_with_logits_elementwise(x, t, w, pw), red == Reduction::Mean, red == Reduction::Sum);
  if (autograd::any_requires_grad(input, target, weight, pos_weight)) {
    const bool need[4] = {input.requires_grad(), target.requires_grad(), weight.defined() && weight.requires_grad(),
                          pos_weight.defined() && pos_weight.requires_grad()};
    autograd::record("BinaryCrossEntropyWithLogitsBackward0", {input, target, weight, pos_weight}, {out},
                     [red, n = x.numel(), need = std::array<bool, 4>{need[0], need[1], need[2], need[3]},
                      sx = SavedTensor(x), st = SavedTensor(t), sw = SavedTensor(w), sp = SavedTensor(pw)](const TensorList& g) {
                       return bce_with_logits_backward(sx.unpack(), st.unpack(), sw.unpack(), sp.unpack(),
                                                       per_element_grad(g[0], red, n), need.data());
                     });
  }
  return out;
}

void check_broadcasts_to(const char* op, const char* name, const Tensor& t, const Shape& shape) {
  if (!t.defined()) return;
  bool ok = t.dim() <= int64_t(shape.size());
  for (int64_t i = 1; ok && i <= t.dim(); ++i) {
    const int64_t a = t.sizes()[size_t(t.dim() - i)], b = shape[shape.size() - size_t(i)];
    ok = a == b || a == 1;
  }
  if (!ok)
    throw_shape_error(op, std::string(name) + " of shape " + format_shape(t.sizes()) +
                              " must broadcast to the input's shape " + format_shape(shape));
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     const std::string& reduction, double label_smoothing) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32, {&input, &target, &weight}); ac)
    return cross_entropy(ac[0], ac[1], ac[2], ignore_index, reduction, label_smoothing);
  return class_loss("cross_entropy", "CrossEntropyLossBackward0", input, target, weight, ignore_index, reduction,
                    label_smoothing, true);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                const std::string& reduction) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32, {&log_probs, &weight}); ac)
    return nll_loss(ac[0], target, ac[1], ignore_index, reduction);
  return class_loss("nll_loss", "NllLossBackward0", log_probs, target, weight, ignore_index, reduction, 0.0, false);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32, {&input, &target}); ac)
    return mse_loss(ac[0], ac[1], reduction);
  OpGuard guard("mse_loss", input, target);
  const Reduction red = parse_reduction(reduction, "mse_loss");
  const ScalarType dt = promote_types(input.dtype(), target.dtype());
  const Shape shape = broadcast_shapes(input.sizes(), target.sizes(), "mse_loss");
  Tensor x = detail::convert(input.detach(), dt), t = detail::convert(target.detach(), dt);
  if (!detail::op_device("mse_loss", x, t).is_cpu()) return mse_loss_cuda(input, target, x, t, red);
  Tensor el = make_tensor(shape, dt);
  cpu::ElementwiseLoop loop = cpu_loop(el, {x, t});
  visit_float(dt, "mse_loss", "input", [&]<typename T>() {
    cpu::binary_kernel<T>(loop, [](compute_t<T> a, compute_t<T> b) { return (a - b) * (a - b); });
  });
  Tensor out = reduce_loss(el, red);
  if (autograd::any_requires_grad(input, target)) {
    const bool gi = input.requires_grad(), gt = target.requires_grad();
    autograd::record("MseLossBackward0", {input, target}, {out},
                     [red, shape, dt, gi, gt, sx = SavedTensor(x), st = SavedTensor(t)](const TensorList& g) {
                       Tensor gs = dense(per_element_grad(g[0], red, numel_of(shape)), dt);
                       Tensor xv = sx.unpack(), tv = st.unpack();
                       Tensor gx = make_tensor(shape, dt);
                       cpu::ElementwiseLoop loop = cpu_loop(gx, {xv, tv, gs});
                       visit_float(dt, "mse_loss_backward", "gradient", [&]<typename T>() {
                         cpu::ternary_kernel<T, T, T, T>(loop, [](auto a, auto b, auto gv) { return 2 * (a - b) * gv; });
                       });
                       return TensorList{gi ? gx : Tensor(), gt ? neg(gx) : Tensor()};
                     });
  }
  return out;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const std::string& reduction, const Tensor& pos_weight) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32, {&input, &target, &weight, &pos_weight}); ac)
    return binary_cross_entropy_with_logits(ac[0], ac[1], ac[2], reduction, ac[3]);
  const char* op = "binary_cross_entropy_with_logits";
  OpGuard guard(op, input, target, weight, pos_weight);
  const Reduction red = parse_reduction(reduction, op);
  if (target.sizes() != input.sizes())
    throw_shape_error(op, "target size " + format_shape(target.sizes()) + " must be the same as input size " +
                              format_shape(input.sizes()),
                      "targets are per-element probabilities; reshape or unsqueeze them to the logits' shape");
  check_broadcasts_to(op, "weight", weight, input.sizes());
  check_broadcasts_to(op, "pos_weight", pos_weight, input.sizes());
  const ScalarType dt = input.dtype();
  const Shape shape = input.sizes();
  Tensor x = detail::convert(input.detach(), dt), t = detail::convert(target.detach(), dt);
  Tensor w = weight.defined() ? detail::convert(weight.detach(), dt) : scalar_of(1.0, dt);
  Tensor pw = pos_weight.defined() ? detail::convert(pos_weight.detach(), dt) : scalar_of(1.0, dt);
  if (!detail::op_device(op, x, t, w, pw).is_cpu()) return bce_with_logits_cuda(input, target, weight, pos_weight, x, t, w, pw, red);
  Tensor el = bce_map(dt, shape, x, t, w, pw, [](auto xv, auto tv, auto wv, auto pv) {
    using C = decltype(xv);
    return wv * ((C(1) - tv) * xv - (C(1) + (pv - C(1)) * tv) * log_sigmoid(xv));
  });
  Tensor out = reduce_loss(el, red);
  if (autograd::any_requires_grad(input, target, weight, pos_weight)) {
    const bool need[4] = {input.requires_grad(), target.requires_grad(), weight.defined() && weight.requires_grad(),
                          pos_weight.defined() && pos_weight.requires_grad()};
    autograd::record(
        "BinaryCrossEntropyWithLogitsBackward0", {input, target, weight, pos_weight}, {out},
        [red, shape, dt, need, sx = SavedTensor(x), st = SavedTensor(t), sw = SavedTensor(w),
         sp = SavedTensor(pw)](const TensorList& g) {
          Tensor xv = sx.unpack(), tv = st.unpack(), wv = sw.unpack(), pv = sp.unpack();
          Tensor gs = dense(per_element_grad(g[0], red, numel_of(shape)), dt);
          Tensor wg = dense(wv * gs, dt);
          TensorList r(4);
          if (need[0])
            r[0] = bce_map(dt, shape, xv, tv, pv, wg, [](auto x, auto t, auto p, auto k) {
              using C = decltype(x);
              return k * ((C(1) - t) - (C(1) + (p - C(1)) * t) * detail::vsigmoid(-x));
            });
          if (need[1])
            r[1] = bce_map(dt, shape, xv, tv, pv, wg, [](auto x, auto, auto p, auto k) {
              using C = decltype(x);
              return k * (-x - (p - C(1)) * log_sigmoid(x));
            });
          if (need[2])
            r[2] = bce_map(dt, shape, xv, tv, pv, gs, [](auto x, auto t, auto p, auto k) {
              using C = decltype(x);
              return k * ((C(1) - t) * x - (C(1) + (p - C(1)) * t) * log_sigmoid(x));
            });
          if (need[3])
            r[3] = bce_map(dt, shape, xv, tv, pv, wg, [](auto x, auto t, auto, auto k) { return -k * t * log_sigmoid(x); });
          return r;
        });
  }
  return out;
}

}  // namespace rt
