// mean, prod, all, any, and the shared reduction helpers. max/min live in reduce_minmax.cpp,
// var/std/norm/logsumexp in reduce_stats.cpp, sum in sum.cpp.
#include <functional>
#include <tuple>

#include "../amp/autocast_policy.h"
#include "composed.h"
#include "ops/column_sums.h"
#include "reduce_cuda.h"
#include "reduce_rows.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;

namespace detail {

void require_floating(const Tensor& t, const char* op) {
  if (is_floating(t.dtype())) return;
  throw DTypeError(std::string(op) + ": expected a floating point input, got " + std::string(dtype_name(t.dtype())) +
                   " of shape " + format_shape(t.sizes()) + module_context() +
                   ". Hint: convert it first, e.g. x.to(rt::kFloat32)");
}

void require_nonempty(const Tensor& t, const cpu::ReducePlan& plan, const char* op) {
  if (plan.inner != 0) return;
  int64_t empty_dim = -1;
  for (int64_t d : plan.dims)
    if (empty_dim < 0 && t.sizes()[size_t(d)] == 0) empty_dim = d;
  throw_shape_error(op, "dimension " + std::to_string(empty_dim) + " of the input of shape " + format_shape(t.sizes()) +
                            " has size 0, and this reduction has no identity",
                    "reduce over dims of non-zero size, or check numel() before reducing");
}

std::vector<double> row_values(const Tensor& t) { return t.detach().to_vector<double>(); }

Tensor from_rows(const Tensor& rows, const Tensor& x, const Shape& dims) {
  const int64_t nd = x.dim();
  std::vector<bool> reduced(size_t(nd), false);
  for (int64_t d : dims) reduced[size_t(d)] = true;
  Shape perm, sizes;
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t d = 0; d < nd; ++d)
      if (reduced[size_t(d)] == (pass == 1)) {
        perm.push_back(d);
        sizes.push_back(x.sizes()[size_t(d)]);
      }
  Tensor v = view(rows, sizes);
  Shape inverse(size_t(nd), 0);
  bool identity = true;
  for (int64_t i = 0; i < nd; ++i) {
    inverse[size_t(perm[size_t(i)])] = i;
    identity &= perm[size_t(i)] == i;
  }
  return identity ? v : contiguous(permute(v, inverse));
}

}  // namespace detail

namespace {

Shape dims_of(std::optional<int64_t> dim) { return dim ? Shape{*dim} : Shape{}; }

// all (Any = false) or any (Any = true): bool results, NaN counts as true.
template <bool Any>
Tensor all_any(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const char* op) {
  OpGuard guard(op, t);
  if (!t.is_cpu())
    return detail::cuda_reduce(Any ? dispatch::ReduceOp::Any : dispatch::ReduceOp::All, t, dims_of(dim), keepdim,
                               kBool, op).first;
  auto plan = detail::ReducePlan::make(t, dims_of(dim), keepdim, op);
  Tensor out = make_tensor(plan.out_shape, kBool);
  bool* o = out.data_ptr<bool>();
  const int64_t inner = plan.inner;
  visit_dtype(t.dtype(), [&]<typename T>() {
    const T* in = static_cast<const T*>(plan.input.raw_data());
    detail::reduce_rows<int>(
        plan.outer, inner,
        [&](int64_t r, int64_t lo, int64_t hi) {
          const T* p = in + r * inner;
          for (int64_t i = lo; i < hi; ++i)
            if ((compute_t<T>(p[i]) != compute_t<T>(0)) == Any) return int(Any);
          return int(!Any);
        },
        [](int a, int b) { return Any ? (a | b) : (a & b); }, [&](int64_t r, int v) { o[r] = v != 0; });
  });
  return out;
}

void mean_rows(const detail::ReducePlan& plan, const Tensor& out) {
  const int64_t inner = plan.inner;
  visit_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      using Acc = detail::acc_t<T>;
      const T* in = static_cast<const T*>(plan.input.raw_data());
      T* o = static_cast<T*>(out.raw_data());
      detail::reduce_rows<Acc>(
          plan.outer, inner,
          [&](int64_t r, int64_t lo, int64_t hi) {
            const T* p = in + r * inner;
            return detail::pairwise_sum<Acc>(lo, hi, [p](int64_t i) { return Acc(p[i]); });
          },
          std::plus<Acc>(), [&](int64_t r, Acc s) { o[r] = T(compute_t<T>(double(s) / double(inner))); });
    }
  });
}

}  // namespace

Tensor mean(const Tensor& t, const Shape& dims, bool keepdim) {
  OpGuard guard("mean", t);
  detail::require_floating(t, "mean");
  cpu::ReducePlan plan;
  Tensor out;
  if (!t.is_cpu()) {
    std::tie(out, plan) = detail::cuda_reduce(dispatch::ReduceOp::Mean, t, dims, keepdim, t.dtype(), "mean");
  } else if (const cpu::ReducePlan shape = detail::ReducePlan::describe(t, dims, keepdim, "mean");
             auto cols = detail::column_layout(t, shape)) {  // leading dims: read in place (ops/column_sums.h)
    out = make_tensor(shape.out_shape, t.dtype());
    detail::column_sums(t, *cols, out, double(cols->rows));
    plan = shape;
  } else {
    detail::ReducePlan rows = detail::ReducePlan::make(t, dims, keepdim, "mean");
    out = make_tensor(rows.out_shape, t.dtype());
    mean_rows(rows, out);
    plan = rows;
  }
  const int64_t inner = plan.inner;
  if (autograd::any_requires_grad(t))
    record(dims.empty() ? "MeanBackward0" : "MeanBackward1", {t}, {out},
           [in = t.sizes(), kept = plan.kept_shape, n = inner](const TensorList& g) {
             return TensorList{div(expand(reshape(g[0], kept), in), scalar_to_tensor(double(n)))};
           });
  return out;
}

Tensor prod(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32, {&t}); ac) return prod(ac[0], dim, keepdim);
  OpGuard guard("prod", t);
  const Shape dims = dims_of(dim);
  const ScalarType out_dtype = is_floating(t.dtype()) ? t.dtype() : kInt64;
  if (!t.is_cpu()) {
    auto [out, plan] = detail::cuda_reduce(dispatch::ReduceOp::Prod, t, dims, keepdim, out_dtype, "prod");
    if (autograd::any_requires_grad(t))
      record(dim ? "ProdBackward1" : "ProdBackward0", {t}, {out},
             [st = SavedTensor(t), so = SavedTensor(out), kept = plan.kept_shape, d = dim](const TensorList& g) {
               return TensorList{detail::composed::prod_backward(st.unpack(), reshape(g[0], kept),
                                                                 reshape(so.unpack(), kept), d)};
             });
    return out;
  }
  auto plan = detail::ReducePlan::make(t, dims, keepdim, "prod");
  Tensor out = make_tensor(plan.out_shape, out_dtype);
  const int64_t inner = plan.inner;
  visit_dtype(t.dtype(), [&]<typename T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, detail::acc_t<T>, int64_t>;
    using O = std::conditional_t<std::is_floating_point_v<compute_t<T>>, T, int64_t>;
    const T* in = static_cast<const T*>(plan.input.raw_data());
    O* o = static_cast<O*>(out.raw_data());
    detail::reduce_rows<Acc>(
        plan.outer, inner,
        [&](int64_t r, int64_t lo, int64_t hi) {
          const T* p = in + r * inner;
          Acc a = 1;
          for (int64_t i = lo; i < hi; ++i) a *= Acc(compute_t<T>(p[i]));
          return a;
        },
        std::multiplies<Acc>(), [&](int64_t r, Acc a) { o[r] = O(a); });
  });
  if (autograd::any_requires_grad(t))
    record(dim ? "ProdBackward1" : "ProdBackward0", {t}, {out}, [st = SavedTensor(t), dims](const TensorList& g) {
      // d/dx_i prod(x) = prefix product before i * suffix product after i (exact with zeros).
      const auto gv = detail::row_values(g[0]);
      return TensorList{detail::grad_rows(st.unpack(), dims, [&]<typename T>(int64_t r, const T* x, T* gx, int64_t n) {
        thread_local std::vector<double> suffix;
        suffix.resize(size_t(n) + 1);
        suffix[size_t(n)] = 1.0;
        for (int64_t i = n - 1; i >= 0; --i) suffix[size_t(i)] = suffix[size_t(i) + 1] * double(compute_t<T>(x[i]));
        double prefix = 1.0;
        for (int64_t i = 0; i < n; ++i) {
          gx[i] = T(compute_t<T>(gv[size_t(r)] * prefix * suffix[size_t(i) + 1]));
          prefix *= double(compute_t<T>(x[i]));
        }
      })};
    });
  return out;
}

Tensor all(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return all_any<false>(t, dim, keepdim, "all"); }
Tensor any(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return all_any<true>(t, dim, keepdim, "any"); }

}  // namespace rt
