// cummax and cummin: the running extreme along a dim and the index it came from. See the contract
// in rt/ops/scan.h.
#include <string>

#include "dim_rows.h"
#include "op_device.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/scan.h"
#include "rt/ops/shape.h"

namespace rt {
using detail::DimRows;
using detail::for_each_row;
using autograd::record;
using autograd::SavedTensor;

namespace {

// A new value takes over when it is NaN, or ties or beats the current one while that is not NaN
// (so ties take the later index, and a NaN stays once seen).
template <bool IsMax, typename C>
bool takes_over(C v, C current) {
  if (detail::is_nan_value(v)) return true;
  if (detail::is_nan_value(current)) return false;
  if constexpr (IsMax) return v >= current;
  else return v <= current;
}

template <bool IsMax>
std::pair<Tensor, Tensor> cumulative_extreme(const char* op, const char* node, const Tensor& t, int64_t dim) {
  OpGuard guard(op, t);
  dim = wrap_dim(dim, t.dim(), op);
  detail::require_cpu(op, t);
  const Tensor x = detail::dense_cpu(t, t.dtype());
  Tensor values = make_tensor(t.sizes(), t.dtype()), indices = make_tensor(t.sizes(), kInt64);
  if (values.numel() > 0) {
    const DimRows L(x.sizes(), dim);
    int64_t* idx = indices.data_ptr<int64_t>();
    visit_dtype(x.dtype(), [&]<typename T>() {
      using C = compute_t<T>;
      const T* in = static_cast<const T*>(x.raw_data());
      T* val = static_cast<T*>(values.raw_data());
      const int64_t n = L.n, s = L.stride();
      for_each_row(L, [&](int64_t r) {
        const int64_t b = L.start(r);
        C best = C(in[b]);
        int64_t at = 0;
        for (int64_t j = 0; j < n; ++j) {
          const C v = C(in[b + j * s]);
          if (takes_over<IsMax>(v, best)) {
            best = v;
            at = j;
          }
          val[b + j * s] = in[b + at * s];
          idx[b + j * s] = at;
        }
      });
    });
  }
  if (autograd::any_requires_grad(t) && is_floating(t.dtype()))
    record(node, {t}, {values}, [si = SavedTensor(indices), sizes = t.sizes(), dim](const TensorList& g) {
      const Tensor zero = zeros(sizes, TensorOptions(g[0].dtype()).with_device(g[0].device()));
      return TensorList{scatter_add(zero, dim, si.unpack(), g[0])};
    });
  return {values, indices};
}

}  // namespace

std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) {
  return cumulative_extreme<true>("cummax", "CummaxBackward0", t, dim);
}
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) {
  return cumulative_extreme<false>("cummin", "CumminBackward0", t, dim);
}

}  // namespace rt
