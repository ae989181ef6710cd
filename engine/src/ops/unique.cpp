// unique and unique_consecutive, of elements or of slices along a dim. See the contract in
// rt/ops/sort.h and Note [NaN order] in dim_rows.h.
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

namespace {

// Groups of equal rows of a contiguous CPU [rows, width] matrix: `order` lists the rows group by
// group, `group_of[r]` is row r's group, `counts` each group's size.
struct Groups {
  std::vector<int64_t> order, group_of, counts;
};

Groups group_rows(const Tensor& m, int64_t rows, int64_t width, bool sort_first) {
  Groups g;
  g.order.resize(size_t(rows));
  std::iota(g.order.begin(), g.order.end(), int64_t(0));
  g.group_of.resize(size_t(rows));
  visit_dtype(m.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* p = static_cast<const T*>(m.raw_data());
    auto value = [&](int64_t r, int64_t k) { return C(p[r * width + k]); };
    // Lexicographic in Note [NaN order]; ties keep row order, so the sort is stable.
    auto before = [&](int64_t a, int64_t b) {
      for (int64_t k = 0; k < width; ++k) {
        const C x = value(a, k), y = value(b, k);
        if (detail::sort_before(x, y)) return true;
        if (detail::sort_before(y, x)) return false;
      }
      return a < b;
    };
    // Equal as values: NaN equals nothing, so each NaN stays a value of its own, as in PyTorch.
    auto same = [&](int64_t a, int64_t b) {
      for (int64_t k = 0; k < width; ++k)
        if (!(value(a, k) == value(b, k))) return false;
      return true;
    };
    if (sort_first) std::sort(g.order.begin(), g.order.end(), before);
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = g.order[size_t(i)];
      if (i == 0 || !same(g.order[size_t(i - 1)], r)) g.counts.push_back(0);
      g.group_of[size_t(r)] = int64_t(g.counts.size()) - 1;
      ++g.counts.back();
    }
  });
  return g;
}

// t with dim d moved to the front, and back again (the others keep their order).
Tensor movedim_front(const Tensor& t, int64_t d) {
  Shape order{d};
  for (int64_t i = 0; i < t.dim(); ++i)
    if (i != d) order.push_back(i);
  return permute(t, order);
}
Tensor movedim_back(const Tensor& t, int64_t d) {
  Shape order;
  for (int64_t i = 0; i < t.dim(); ++i) order.push_back(i < d ? i + 1 : i == d ? 0 : i);
  return permute(t, order);
}

// A node whose backward throws, as PyTorch's for unique: the values may require grad, but
// no derivative is defined.
void record_no_derivative(const char* node, const char* op, const Tensor& t, const Tensor& values) {
  autograd::record(node, {t}, {values}, [op](const TensorList&) -> TensorList {
    throw NotImplementedError(std::string("the derivative for '") + op +
                              "' is not implemented (as in PyTorch). Hint: detach() the input first, or select the "
                              "values with index ops (index_select with the inverse indices) to keep the gradient");
  });
}

UniqueResult unique_impl(const char* op, const char* node, const Tensor& t, bool sort_first, bool return_inverse,
                         bool return_counts, std::optional<int64_t> dim) {
  OpGuard guard(op, t);
  std::optional<int64_t> d;
  if (dim) d = wrap_dim(*dim, t.dim(), op);
  detail::require_cpu(op, t);
  // The slices to compare as the rows of a matrix: elements (width 1), or slices along d.
  Tensor rows_matrix;
  int64_t rows = 0, width = 1;
  {
    NoGradGuard no_grad;
    if (d && t.dim() > 0) {
      rows = t.size(*d);
      width = rows == 0 ? 0 : t.numel() / rows;
      rows_matrix = detail::dense_cpu(reshape(movedim_front(t, *d), {rows, width}), t.dtype());
    } else {
      rows = t.numel();
      rows_matrix = detail::dense_cpu(reshape(t, {rows, 1}), t.dtype());
    }
  }
  const Groups g = group_rows(rows_matrix, rows, width, sort_first);
  const int64_t n_groups = int64_t(g.counts.size());
  std::vector<int64_t> first(static_cast<size_t>(n_groups));
  for (int64_t i = 0, k = 0; k < n_groups; i += g.counts[size_t(k)], ++k) first[size_t(k)] = g.order[size_t(i)];
  UniqueResult result;
  {
    NoGradGuard no_grad;
    const Tensor picked = index_select(rows_matrix, 0, from_vector(first));
    if (d && t.dim() > 0) {
      Shape front = t.sizes();
      front.erase(front.begin() + *d);
      front.insert(front.begin(), n_groups);
      result.values = movedim_back(reshape(picked, front), *d).contiguous();
    } else {
      result.values = reshape(picked, {n_groups});
    }
  }
  if (return_inverse) {
    const Shape inverse_shape = d ? Shape{rows} : t.sizes();
    result.inverse_indices = from_vector(g.group_of, inverse_shape);
  }
  if (return_counts) result.counts = from_vector(g.counts);
  if (autograd::any_requires_grad(t) && is_floating(t.dtype())) record_no_derivative(node, op, t, result.values);
  return result;
}

}  // namespace

UniqueResult unique(const Tensor& t, bool /*sorted: always*/, bool return_inverse, bool return_counts,
                    std::optional<int64_t> dim) {
  return unique_impl("unique", dim ? "UniqueDimBackward0" : "Unique2Backward0", t, true, return_inverse, return_counts,
                     dim);
}

UniqueResult unique_consecutive(const Tensor& t, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
  return unique_impl("unique_consecutive", "UniqueConsecutiveBackward0", t, false, return_inverse, return_counts, dim);
}

}  // namespace rt
