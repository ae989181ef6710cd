// The rows a per-dim CPU kernel walks (sort, scans, topk...), and the value order those kernels share.
//
//   const Tensor x = detail::dense_cpu(t, t.dtype());          // contiguous, no op recorded
//   const detail::DimRows L(x.sizes(), dim);                   // dim already wrapped
//   detail::for_each_row(L, [&](int64_t r) {
//     const int64_t b = L.start(r);                             // element j of row r: b + j * L.stride()
//   });
//
// A contiguous tensor seen around `dim` is [outer, n, inner]; each of the outer * inner rows is the
// n elements along dim, `inner` apart. A 0-dim tensor is one row of one element.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "device_copy.h"
#include "reduce_rows.h"
#include "rt/tensor.h"

namespace rt::detail {

struct DimRows {
  int64_t outer = 1, n = 1, inner = 1;
  DimRows(const Shape& sizes, int64_t dim) {
    if (sizes.empty()) return;
    for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
      const int64_t s = sizes[size_t(d)];
      if (d < dim) outer *= s;
      else if (d == dim) n = s;
      else inner *= s;
    }
  }
  int64_t rows() const { return outer * inner; }
  int64_t start(int64_t r) const { return (r / inner) * n * inner + r % inner; }
  int64_t stride() const { return inner; }
};

// f(r) for every row, across threads when the rows are many elements.
template <typename F>
void for_each_row(const DimRows& L, const F& f) {
  parallel_rows(L.rows(), L.rows() * L.n, f);
}

// t on the CPU, contiguous, in `dtype`: t itself when it already is, else a copy (no op recorded).
inline Tensor dense_cpu(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype && t.is_contiguous() && t.device().is_cpu()) return t;
  Tensor c = make_tensor(t.sizes(), dtype);
  copy_into(c, t);
  return c;
}

// Note [NaN order]
// Sorting ops order values as PyTorch does: NaN is above every number, and NaNs tie with each
// other. sort_before(a, b) is the strict ascending order; descending uses sort_before(b, a).
template <typename C>
bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

template <typename C>
bool sort_before(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) return a < b || (!std::isnan(a) && std::isnan(b));
  else return a < b;
}

}  // namespace rt::detail
