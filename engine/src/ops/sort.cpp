// sort, argsort, msort, topk and kthvalue along a dim. See the contract in rt/ops/sort.h and
// Note [NaN order] in dim_rows.h.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "dim_rows.h"
#include "op_device.h"
#include "rt/autograd/grad_mode.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/shape.h"
#include "rt/ops/sort.h"
#include "rt/ops/view.h"

namespace rt {
using detail::DimRows;
using detail::for_each_row;
using autograd::record;
using autograd::SavedTensor;

namespace {

// Which elements of each row are kept, and in which order.
struct RankRequest {
  enum Kind { All, Top, Kth } kind = All;
  int64_t k = 0;            // Top: how many; Kth: which (0-based) in ascending order
  bool descending = false;  // All and Top
};

// values/indices get, per row, the picked elements: `count` of them, written `out_stride` apart.
// x is contiguous on the CPU; values has x's dtype.
void rank_rows(const Tensor& x, const DimRows& L, const RankRequest& req, const Tensor& values, const Tensor& indices,
               int64_t count) {
  const int64_t n = L.n, s = L.stride(), out_stride = req.kind == RankRequest::Kth ? 1 : s;
  int64_t* idx_out = indices.data_ptr<int64_t>();
  visit_dtype(x.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* in = static_cast<const T*>(x.raw_data());
    T* val_out = static_cast<T*>(values.raw_data());
    for_each_row(L, [&](int64_t r) {
      const T* row = in + L.start(r);
      const int64_t out_base = req.kind == RankRequest::Kth ? r : (r / s) * count * s + r % s;
      auto value = [&](int64_t j) { return C(row[j * s]); };
      // Ties in value go to the lower position, so every order below is total and deterministic.
      auto ascending = [&](int64_t i, int64_t j) {
        const C a = value(i), b = value(j);
        return detail::sort_before(a, b) || (!detail::sort_before(b, a) && i < j);
      };
      auto descending = [&](int64_t i, int64_t j) {
        const C a = value(i), b = value(j);
        return detail::sort_before(b, a) || (!detail::sort_before(a, b) && i < j);
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), int64_t(0));
      switch (req.kind) {
        case RankRequest::All:
          if (req.descending) std::sort(order.begin(), order.end(), descending);
          else std::sort(order.begin(), order.end(), ascending);
          break;
        case RankRequest::Top:
          if (req.descending) std::partial_sort(order.begin(), order.begin() + count, order.end(), descending);
          else std::partial_sort(order.begin(), order.begin() + count, order.end(), ascending);
          break;
        case RankRequest::Kth:
          std::nth_element(order.begin(), order.begin() + req.k, order.end(), ascending);
          order[0] = order[size_t(req.k)];
          break;
      }
      for (int64_t j = 0; j < count; ++j) {
        val_out[out_base + j * out_stride] = row[order[size_t(j)] * s];
        idx_out[out_base + j * out_stride] = order[size_t(j)];
      }
    });
  });
}

// The gradient of a value-selecting op: each incoming gradient goes to the element its value
// came from (PyTorch's value_selecting_reduction_backward), on any device, recordable.
void record_selection_backward(const char* node, const Tensor& t, const Tensor& values, const Tensor& indices,
                               int64_t dim, bool reduced_dim) {
  record(node, {t}, {values}, [si = SavedTensor(indices), sizes = t.sizes(), dim, reduced_dim](const TensorList& g) {
    Tensor grad = g[0], idx = si.unpack();
    if (reduced_dim && !sizes.empty()) {
      grad = unsqueeze(grad, dim);
      idx = unsqueeze(idx, dim);
    }
    const Tensor zero = zeros(sizes, TensorOptions(grad.dtype()).with_device(grad.device()));
    return TensorList{scatter_add(zero, dim, idx, grad)};
  });
}

std::pair<Tensor, Tensor> rank(const char* op, const char* node, const Tensor& t, int64_t dim, RankRequest req,
                               bool keepdim) {
  OpGuard guard(op, t);
  dim = wrap_dim(dim, t.dim(), op);
  detail::require_cpu(op, t);
  const Tensor x = detail::dense_cpu(t, t.dtype());
  const DimRows L(x.sizes(), dim);
  Shape out_shape = t.sizes();
  int64_t count = L.n;
  if (req.kind == RankRequest::Top) {
    // A 0-dim input keeps its one element whatever k (0 or 1) asks, as PyTorch.
    count = out_shape.empty() ? 1 : req.k;
    if (!out_shape.empty()) out_shape[size_t(dim)] = count;
  } else if (req.kind == RankRequest::Kth) {
    count = 1;
    if (!out_shape.empty()) {
      if (keepdim) out_shape[size_t(dim)] = 1;
      else out_shape.erase(out_shape.begin() + dim);
    }
  }
  Tensor values = make_tensor(out_shape, t.dtype()), indices = make_tensor(out_shape, kInt64);
  if (values.numel() > 0) rank_rows(x, L, req, values, indices, count);
  if (autograd::any_requires_grad(t) && is_floating(t.dtype()))
    record_selection_backward(node, t, values, indices, dim, req.kind == RankRequest::Kth && !keepdim);
  return {values, indices};
}

// k must lie in [lo, size(dim)] (topk: 0, kthvalue: 1).
void check_k(const char* op, const Tensor& t, int64_t dim, int64_t k, int64_t lo) {
  const int64_t size = t.dim() == 0 ? 1 : t.size(wrap_dim(dim, t.dim(), op));
  if (k >= lo && k <= size) return;
  throw IndexError(std::string(op) + ": k = " + std::to_string(k) + " is out of range for dimension " +
                   std::to_string(dim) + " of size " + std::to_string(size) + " (input " + format_shape(t.sizes()) +
                   ")" + module_context() + ". Hint: k must be in [" + std::to_string(lo) + ", " +
                   std::to_string(size) + "]");
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool /*stable: always*/) {
  return rank("sort", "SortBackward0", t, dim, RankRequest{RankRequest::All, 0, descending}, false);
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  NoGradGuard no_grad;  // only the indices are returned
  return sort(t, dim, descending, stable).second;
}

Tensor msort(const Tensor& t) { return sort(t, 0).first; }

std::pair<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool /*sorted: always*/) {
  wrap_dim(dim, t.dim(), "topk");
  check_k("topk", t, dim, k, 0);
  return rank("topk", "TopkBackward0", t, dim, RankRequest{RankRequest::Top, k, largest}, false);
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  wrap_dim(dim, t.dim(), "kthvalue");
  check_k("kthvalue", t, dim, k, 1);
  return rank("kthvalue", "KthvalueBackward0", t, dim, RankRequest{RankRequest::Kth, k - 1, false}, keepdim);
}

}  // namespace rt
