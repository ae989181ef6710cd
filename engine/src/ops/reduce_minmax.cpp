// max, min (full, and along a dim with indices), amax, amin, argmax, argmin.
// NaN wins every comparison (it propagates); ties keep the first occurrence, like PyTorch.
#include <cmath>

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

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

template <bool IsMax, typename C>
bool better(C a, C b) {
  if constexpr (IsMax) return a > b;
  else return a < b;
}

// Per row of the plan: the extreme value (into `values`, of the input dtype) and/or its
// first index (into `indices`, int64). Either output may be undefined.
template <bool IsMax>
void extreme_rows(const detail::ReducePlan& plan, ScalarType dtype, const Tensor& values, const Tensor& indices) {
  const int64_t inner = plan.inner;
  int64_t* idx = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  visit_dtype(dtype, [&]<typename T>() {
    using C = compute_t<T>;
    struct Acc {
      C v;
      int64_t i;
    };
    const T* in = static_cast<const T*>(plan.input.raw_data());
    T* val = values.defined() ? static_cast<T*>(values.raw_data()) : nullptr;
    detail::reduce_rows<Acc>(
        plan.outer, inner,
        [&](int64_t r, int64_t lo, int64_t hi) {
          const T* p = in + r * inner;
          Acc a{C(p[lo]), lo};
          if (is_nan(a.v)) return a;
          for (int64_t i = lo + 1; i < hi; ++i) {
            const C v = C(p[i]);
            if (is_nan(v)) return Acc{v, i};
            if (better<IsMax>(v, a.v)) a = Acc{v, i};
          }
          return a;
        },
        [](const Acc& a, const Acc& b) {
          if (is_nan(a.v)) return a;
          if (is_nan(b.v) || better<IsMax>(b.v, a.v)) return b;
          return a;
        },
        [&](int64_t r, const Acc& a) {
          if (val) val[r] = T(a.v);
          if (idx) idx[r] = a.i;
        });
  });
}

// Gradient that splits each row's incoming gradient evenly among the elements equal to the
// row's result (NaN matching NaN): max()/min() full reductions and amax/amin.
Tensor evenly_distribute(const Tensor& x, const Shape& dims, const Tensor& result, const Tensor& grad) {
  const auto rv = detail::row_values(result), gv = detail::row_values(grad);
  return detail::grad_rows(x, dims, [&]<typename T>(int64_t r, const T* p, T* gx, int64_t n) {
    const double m = rv[size_t(r)];
    auto hit = [m](double v) { return v == m || (std::isnan(v) && std::isnan(m)); };
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += hit(double(compute_t<T>(p[i])));
    const double share = gv[size_t(r)] / double(count);
    for (int64_t i = 0; i < n; ++i) gx[i] = T(compute_t<T>(hit(double(compute_t<T>(p[i]))) ? share : 0.0));
  });
}

// max(dim)/min(dim) on a GPU; the gradient goes to the index each row picked, through a
// one-hot mask built from arange (composed of ops).
template <bool IsMax>
std::pair<Tensor, Tensor> extreme_dim_cuda(const Tensor& t, int64_t dim, bool keepdim, const char* op, const char* node) {
  const cpu::ReducePlan plan = detail::ReducePlan::describe(t, {dim}, keepdim, op);
  detail::require_nonempty(t, plan, op);
  const int64_t d = plan.dims.empty() ? 0 : plan.dims[0];
  Tensor values = make_tensor(plan.out_shape, t.dtype(), t.device());
  Tensor indices = make_tensor(plan.out_shape, kInt64, t.device());
  Tensor in = t;
  if (t.dim() == 0) {  // a 0-dim tensor reduces along its dim 0 as a 1-element row (the kernel needs that dim)
    NoGradGuard no_grad;
    in = t.reshape({1});
  }
  dispatch::reduce_with_indices(values.device(), IsMax, values, indices, in, d);
  if (autograd::any_requires_grad(t))
    record(node, {t}, {values}, [si = SavedTensor(indices), kept = plan.kept_shape, sizes = t.sizes(), d](const TensorList& g) {
      Shape along(sizes.size(), 1);
      if (!sizes.empty()) along[size_t(d)] = sizes[size_t(d)];
      const Tensor positions = arange(sizes.empty() ? 1 : sizes[size_t(d)], TensorOptions(kInt64).with_device(g[0].device()))
                                   .view(along);
      const Tensor one_hot = eq(positions, reshape(si.unpack(), kept)).to(g[0].dtype());
      return TensorList{one_hot * reshape(g[0], kept)};
    });
  return {values, indices};
}

template <bool IsMax>
std::pair<Tensor, Tensor> extreme_dim(const Tensor& t, int64_t dim, bool keepdim, const char* op, const char* node) {
  OpGuard guard(op, t);
  if (!t.is_cpu()) return extreme_dim_cuda<IsMax>(t, dim, keepdim, op, node);
  auto plan = detail::ReducePlan::make(t, {dim}, keepdim, op);
  detail::require_nonempty(t, plan, op);
  Tensor values = make_tensor(plan.out_shape, t.dtype());
  Tensor indices = make_tensor(plan.out_shape, kInt64);
  extreme_rows<IsMax>(plan, t.dtype(), values, indices);
  if (autograd::any_requires_grad(t))
    record(node, {t}, {values}, [st = SavedTensor(t), si = SavedTensor(indices), dim](const TensorList& g) {
      const auto gv = detail::row_values(g[0]);
      const auto iv = si.unpack().to_vector<int64_t>();
      return TensorList{detail::grad_rows(st.unpack(), {dim}, [&]<typename T>(int64_t r, const T*, T* gx, int64_t n) {
        for (int64_t i = 0; i < n; ++i) gx[i] = T(compute_t<T>(0));
        gx[iv[size_t(r)]] = T(compute_t<T>(gv[size_t(r)]));
      })};
    });
  return {values, indices};
}

// The same on a GPU, the gradient composed of ops (eq, isnan, sum) instead of a row loop.
template <bool IsMax>
Tensor extreme_dims_cuda(const Tensor& t, const Shape& dims, bool keepdim, const char* op, const char* node) {
  detail::require_nonempty(t, detail::ReducePlan::describe(t, dims, keepdim, op), op);
  auto [out, plan] = detail::cuda_reduce(IsMax ? dispatch::ReduceOp::Max : dispatch::ReduceOp::Min, t, dims, keepdim,
                                         t.dtype(), op);
  if (autograd::any_requires_grad(t))
    record(node, {t}, {out}, [st = SavedTensor(t), so = SavedTensor(out), kept = plan.kept_shape, rdims = plan.dims](const TensorList& g) {
      const Tensor x = st.unpack(), r = reshape(so.unpack(), kept);
      Tensor hit = eq(x, r);
      if (is_floating(x.dtype())) hit = logical_or(hit, logical_and(isnan(x), isnan(r)));
      const Tensor m = hit.to(x.dtype());
      return TensorList{m * reshape(g[0], kept) / sum(m, rdims, true)};
    });
  return out;
}

template <bool IsMax>
Tensor extreme_dims(const Tensor& t, const Shape& dims, bool keepdim, const char* op, const char* node) {
  OpGuard guard(op, t);
  if (!t.is_cpu()) return extreme_dims_cuda<IsMax>(t, dims, keepdim, op, node);
  auto plan = detail::ReducePlan::make(t, dims, keepdim, op);
  detail::require_nonempty(t, plan, op);
  Tensor out = make_tensor(plan.out_shape, t.dtype());
  extreme_rows<IsMax>(plan, t.dtype(), out, Tensor());
  if (autograd::any_requires_grad(t))
    record(node, {t}, {out}, [st = SavedTensor(t), so = SavedTensor(out), dims](const TensorList& g) {
      return TensorList{evenly_distribute(st.unpack(), dims, so.unpack(), g[0])};
    });
  return out;
}

template <bool IsMax>
Tensor arg_extreme(const Tensor& t, std::optional<int64_t> dim, bool keepdim, const char* op) {
  OpGuard guard(op, t);
  if (!t.is_cpu()) {
    const Shape dims = dim ? Shape{*dim} : Shape{};
    detail::require_nonempty(t, detail::ReducePlan::describe(t, dims, keepdim, op), op);
    return detail::cuda_reduce(IsMax ? dispatch::ReduceOp::ArgMax : dispatch::ReduceOp::ArgMin, t, dims, keepdim,
                               kInt64, op).first;
  }
  auto plan = detail::ReducePlan::make(t, dim ? Shape{*dim} : Shape{}, keepdim, op);
  detail::require_nonempty(t, plan, op);
  Tensor indices = make_tensor(plan.out_shape, kInt64);
  extreme_rows<IsMax>(plan, t.dtype(), Tensor(), indices);
  return indices;
}

}  // namespace

Tensor max(const Tensor& t) { return extreme_dims<true>(t, {}, false, "max", "MaxBackward1"); }
Tensor min(const Tensor& t) { return extreme_dims<false>(t, {}, false, "min", "MinBackward1"); }
std::pair<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_dim<true>(t, dim, keepdim, "max", "MaxBackward0");
}
std::pair<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_dim<false>(t, dim, keepdim, "min", "MinBackward0");
}
Tensor amax(const Tensor& t, const Shape& dims, bool keepdim) {
  return extreme_dims<true>(t, dims, keepdim, "amax", "AmaxBackward0");
}
Tensor amin(const Tensor& t, const Shape& dims, bool keepdim) {
  return extreme_dims<false>(t, dims, keepdim, "amin", "AminBackward0");
}
Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return arg_extreme<true>(t, dim, keepdim, "argmax"); }
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return arg_extreme<false>(t, dim, keepdim, "argmin"); }

}  // namespace rt
