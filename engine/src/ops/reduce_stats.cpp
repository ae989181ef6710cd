// var, std, norm, logsumexp: floating-only reductions, each two passes over the rows.
#include <cmath>
#include <functional>
#include <limits>

#include "../amp/autocast_policy.h"
#include "composed.h"
#include "reduce_cuda.h"
#include "reduce_rows.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Per-row sums of f(x) with f: compute type -> Acc, pairwise (see Note [Deterministic reduction tree]).
template <typename T, typename Acc, typename F, typename Finish>
void sum_rows(const detail::ReducePlan& plan, const F& f, const Finish& finish) {
  const T* in = static_cast<const T*>(plan.input.raw_data());
  const int64_t inner = plan.inner;
  detail::reduce_rows<Acc>(
      plan.outer, inner,
      [&](int64_t r, int64_t lo, int64_t hi) {
        const T* p = in + r * inner;
        return detail::pairwise_sum<Acc>(lo, hi, [&](int64_t i) { return f(r, compute_t<T>(p[i])); });
      },
      std::plus<Acc>(), finish);
}

// Per-row max (IsMax) or min of f(x), NaN propagating; empty rows give -inf (max) / inf (min).
template <bool IsMax, typename T, typename Acc, typename F, typename Finish>
void extreme_rows(const detail::ReducePlan& plan, const F& f, const Finish& finish) {
  const T* in = static_cast<const T*>(plan.input.raw_data());
  const int64_t inner = plan.inner;
  auto pick = [](Acc a, Acc b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    return IsMax ? (b > a ? b : a) : (b < a ? b : a);
  };
  detail::reduce_rows<Acc>(
      plan.outer, inner,
      [&](int64_t r, int64_t lo, int64_t hi) {
        const T* p = in + r * inner;
        Acc a = IsMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
        for (int64_t i = lo; i < hi; ++i) a = pick(a, f(compute_t<T>(p[i])));
        return a;
      },
      pick, finish);
}

template <typename T>
double value(T v) {
  return double(compute_t<T>(v));
}

double sgn(double v) { return std::isnan(v) ? v : double((v > 0) - (v < 0)); }

// Per-row mean of a plan row, in double (backward only).
template <typename T>
double row_mean(const T* x, int64_t n) {
  return detail::pairwise_sum<double>(0, n, [x](int64_t i) { return value(x[i]); }) / double(n);
}

Tensor var_std(const Tensor& t, const Shape& dims, int64_t correction, bool keepdim, bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  OpGuard guard(op, t);
  detail::require_floating(t, op);
  if (!t.is_cpu()) {
    auto [out, plan] = detail::cuda_reduce(take_sqrt ? dispatch::ReduceOp::Std : dispatch::ReduceOp::Var, t, dims,
                                           keepdim, t.dtype(), op, correction);
    if (autograd::any_requires_grad(t))
      record(take_sqrt ? "StdBackward0" : "VarBackward0", {t}, {out},
             [st = SavedTensor(t), so = SavedTensor(out), kept = plan.kept_shape, rdims = plan.dims, n = plan.inner,
              correction, take_sqrt](const TensorList& g) {
               return TensorList{detail::composed::var_std_backward(st.unpack(), reshape(g[0], kept),
                                                                    reshape(so.unpack(), kept), rdims, n, correction,
                                                                    take_sqrt)};
             });
    return out;
  }
  auto plan = detail::ReducePlan::make(t, dims, keepdim, op);
  Tensor out = make_tensor(plan.out_shape, t.dtype());
  const double denom = std::max(0.0, double(plan.inner - correction));
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using Acc = detail::acc_t<T>;
      std::vector<Acc> means(size_t(plan.outer));
      sum_rows<T, Acc>(plan, [](int64_t, Acc v) { return v; },
                       [&](int64_t r, Acc s) { means[size_t(r)] = Acc(double(s) / double(plan.inner)); });
      T* o = static_cast<T*>(out.raw_data());
      sum_rows<T, Acc>(
          plan, [&](int64_t r, Acc v) { return (v - means[size_t(r)]) * (v - means[size_t(r)]); },
          [&](int64_t r, Acc m2) {
            const double v = double(m2) / denom;
            o[r] = T(compute_t<T>(take_sqrt ? std::sqrt(v) : v));
          });
    }
  });
  if (autograd::any_requires_grad(t))
    record(take_sqrt ? "StdBackward0" : "VarBackward0", {t}, {out},
           [st = SavedTensor(t), so = SavedTensor(out), dims, correction, take_sqrt](const TensorList& g) {
             const auto gv = detail::row_values(g[0]), ov = detail::row_values(so.unpack());
             return TensorList{detail::grad_rows(st.unpack(), dims, [&]<typename T>(int64_t r, const T* x, T* gx, int64_t n) {
               const double mean = row_mean(x, n), dof = double(n - correction);
               const double sd = ov[size_t(r)];
               const double scale = take_sqrt ? (sd == 0 ? 0.0 : gv[size_t(r)] / (dof * sd)) : 2.0 * gv[size_t(r)] / dof;
               for (int64_t i = 0; i < n; ++i) gx[i] = T(compute_t<T>(scale * (value(x[i]) - mean)));
             })};
           });
  return out;
}

// d norm_p(x) / dx_i, times the incoming gradient g (PyTorch's norm_backward).
double norm_grad(double x, double p, double norm, double g, double ties) {
  const double ax = std::abs(x);
  if (p == 0) return 0.0;
  if (p == 1) return sgn(x) * g;
  if (p == 2) return norm == 0 ? 0.0 : g * x / norm;
  if (std::isinf(p)) return (ax == norm || std::isnan(ax)) ? sgn(x) * g / ties : 0.0;
  if (p < 1) return x == 0 ? 0.0 : sgn(x) * std::pow(ax, p - 1) * g * std::pow(norm, 1 - p);
  const double scale = norm == 0 ? 0.0 : g / std::pow(norm, p - 1);
  return (p < 2 ? sgn(x) * std::pow(ax, p - 1) : x * std::pow(ax, p - 2)) * scale;
}

// norm on a GPU: composed of reductions and pointwise ops (composed.h), recorded as one node.
Tensor norm_cuda(const Tensor& t, double p, const Shape& dims, bool keepdim) {
  const auto plan = detail::ReducePlan::describe(t, dims, keepdim, "norm");
  if (std::isinf(p)) detail::require_nonempty(t, plan, p > 0 ? "norm (p=inf)" : "norm (p=-inf)");
  Tensor out = detail::composed::norm(t, p, plan.dims, keepdim);
  if (autograd::any_requires_grad(t))
    record("LinalgVectorNormBackward0", {t}, {out},
           [st = SavedTensor(t), so = SavedTensor(out), k = plan.kept_shape, rdims = plan.dims, p](const TensorList& g) {
             return TensorList{detail::composed::norm_backward(st.unpack(), reshape(g[0], k), reshape(so.unpack(), k), p, rdims)};
           });
  return out;
}

// logsumexp on a GPU: composed of amax, exp, sum and log, recorded as one node.
Tensor logsumexp_cuda(const Tensor& t, const Shape& dims, bool keepdim) {
  const auto plan = detail::ReducePlan::describe(t, dims, keepdim, "logsumexp");
  // Over zero elements the sum of exps is 0: -inf, as on the CPU (amax has no identity there).
  Tensor out = plan.inner == 0 ? full(plan.out_shape, -kInf, TensorOptions(t.dtype()).with_device(t.device()))
                               : detail::composed::logsumexp(t, plan.dims, keepdim);
  if (autograd::any_requires_grad(t))
    record("LogsumexpBackward0", {t}, {out}, [st = SavedTensor(t), so = SavedTensor(out), k = plan.kept_shape](const TensorList& g) {
      return TensorList{detail::composed::logsumexp_backward(st.unpack(), reshape(g[0], k), reshape(so.unpack(), k))};
    });
  return out;
}

}  // namespace

Tensor var(const Tensor& t, const Shape& dims, int64_t correction, bool keepdim) {
  return var_std(t, dims, correction, keepdim, false);
}
Tensor std(const Tensor& t, const Shape& dims, int64_t correction, bool keepdim) {
  return var_std(t, dims, correction, keepdim, true);
}

Tensor norm(const Tensor& t, const Scalar& p_in, const Shape& dims, bool keepdim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&t}); ac)
    return norm(ac[0], p_in, dims, keepdim);
  OpGuard guard("norm", t);
  detail::require_floating(t, "norm");
  const double p = p_in.to_double();
  if (std::isnan(p)) throw ValueError("norm: the order p must be a number, got nan" + module_context());
  if (!t.is_cpu()) return norm_cuda(t, p, dims, keepdim);
  auto plan = detail::ReducePlan::make(t, dims, keepdim, "norm");
  if (std::isinf(p)) detail::require_nonempty(t, plan, p > 0 ? "norm (p=inf)" : "norm (p=-inf)");
  Tensor out = make_tensor(plan.out_shape, t.dtype());
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      T* o = static_cast<T*>(out.raw_data());
      auto store = [o](int64_t r, double v) { o[r] = T(compute_t<T>(v)); };
      auto abs_of = [](double v) { return std::abs(v); };
      if (p == kInf) extreme_rows<true, T, double>(plan, abs_of, store);
      else if (p == -kInf) extreme_rows<false, T, double>(plan, abs_of, store);
      else if (p == 0) sum_rows<T, double>(plan, [](int64_t, double v) { return v != 0 ? 1.0 : 0.0; }, store);
      else if (p == 1) sum_rows<T, double>(plan, [](int64_t, double v) { return std::abs(v); }, store);
      else if (p == 2)
        sum_rows<T, double>(plan, [](int64_t, double v) { return v * v; },
                            [&](int64_t r, double s) { store(r, std::sqrt(s)); });
      else
        sum_rows<T, double>(plan, [p](int64_t, double v) { return std::pow(std::abs(v), p); },
                            [&](int64_t r, double s) { store(r, std::pow(s, 1.0 / p)); });
    }
  });
  if (autograd::any_requires_grad(t))
    record("LinalgVectorNormBackward0", {t}, {out}, [st = SavedTensor(t), so = SavedTensor(out), dims, p](const TensorList& g) {
      const auto gv = detail::row_values(g[0]), nv = detail::row_values(so.unpack());
      return TensorList{detail::grad_rows(st.unpack(), dims, [&]<typename T>(int64_t r, const T* x, T* gx, int64_t n) {
        const double nr = nv[size_t(r)];
        double ties = 1;
        if (std::isinf(p)) {
          ties = 0;
          for (int64_t i = 0; i < n; ++i) ties += std::abs(value(x[i])) == nr || std::isnan(value(x[i]));
        }
        for (int64_t i = 0; i < n; ++i) gx[i] = T(compute_t<T>(norm_grad(value(x[i]), p, nr, gv[size_t(r)], ties)));
      })};
    });
  return out;
}

Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&t}); ac)
    return logsumexp(ac[0], dims, keepdim);
  OpGuard guard("logsumexp", t);
  detail::require_floating(t, "logsumexp");
  if (!t.is_cpu()) return logsumexp_cuda(t, dims, keepdim);
  auto plan = detail::ReducePlan::make(t, dims, keepdim, "logsumexp");
  Tensor out = make_tensor(plan.out_shape, t.dtype());
  visit_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using Acc = detail::acc_t<T>;
      // Shift by the row max; rows whose max is infinite (all -inf, or some +inf) shift by 0.
      std::vector<Acc> shift(size_t(plan.outer));
      extreme_rows<true, T, Acc>(plan, [](Acc v) { return v; },
                                 [&](int64_t r, Acc m) { shift[size_t(r)] = std::isinf(m) ? Acc(0) : m; });
      T* o = static_cast<T*>(out.raw_data());
      sum_rows<T, Acc>(plan, [&](int64_t r, Acc v) { return std::exp(v - shift[size_t(r)]); },
                       [&](int64_t r, Acc s) { o[r] = T(compute_t<T>(std::log(s) + shift[size_t(r)])); });
    }
  });
  if (autograd::any_requires_grad(t))
    record("LogsumexpBackward0", {t}, {out}, [st = SavedTensor(t), so = SavedTensor(out), dims](const TensorList& g) {
      const auto gv = detail::row_values(g[0]), ov = detail::row_values(so.unpack());
      return TensorList{detail::grad_rows(st.unpack(), dims, [&]<typename T>(int64_t r, const T* x, T* gx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) gx[i] = T(compute_t<T>(gv[size_t(r)] * std::exp(value(x[i]) - ov[size_t(r)])));
      })};
    });
  return out;
}

}  // namespace rt
