// Row-wise reduction machinery shared by reduce.cpp, reduce_minmax.cpp and reduce_stats.cpp.
//
// Every reduction runs on a detail::ReducePlan layout (ops/reduce_plan.h): `outer` rows of `inner` contiguous
// elements. See Note [Deterministic reduction tree].
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "cpu/loops.h"
#include "ops/reduce_plan.h"
#include "rt/ops/view.h"

namespace rt::detail {

// Note [Deterministic reduction tree]
// A row of n elements is cut into chunks of kReduceChunk elements; each chunk is reduced on
// its own (sums pairwise, with eight-lane leaves) and neighbouring chunk results are merged
// pairwise, earlier chunk first. The tree depends on n alone, so results are bitwise equal
// whatever the thread count, and float32 sums lose O(log n) ulps rather than O(n).
inline constexpr int64_t kReduceChunk = 16384;

// Sum of f(i) for i in [lo, hi).
template <typename Acc, typename F>
Acc pairwise_sum(int64_t lo, int64_t hi, const F& f) {
  if (hi - lo <= 256) {
    Acc lane[8] = {};
    int64_t i = lo;
    for (; i + 8 <= hi; i += 8)
      for (int k = 0; k < 8; ++k) lane[k] += f(i + k);
    for (int k = 0; i < hi; ++i, ++k) lane[k] += f(i);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  const int64_t mid = lo + ((hi - lo) / 2 + 7) / 8 * 8;
  return pairwise_sum<Acc>(lo, mid, f) + pairwise_sum<Acc>(mid, hi, f);
}

// Runs f(i) for i in [0, n), across OpenMP threads when `work` (elements touched) is large.
template <typename F>
void parallel_rows(int64_t n, int64_t work, const F& f) {
  if (work >= cpu::kParallelGrain && n > 1 && cpu::num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

template <typename Acc, typename Merge>
Acc merge_tree(const Acc* parts, int64_t n, const Merge& merge) {
  if (n == 1) return parts[0];
  const int64_t mid = n / 2;
  return merge(merge_tree(parts, mid, merge), merge_tree(parts + mid, n - mid, merge));
}

// Reduces each of `outer` rows of `inner` elements. chunk(r, lo, hi) reduces elements
// [lo, hi) of row r (possibly an empty range), merge(a, b) joins neighbouring results (a comes
// first), finish(r, acc) stores the result of row r.
template <typename Acc, typename Chunk, typename Merge, typename Finish>
void reduce_rows(int64_t outer, int64_t inner, const Chunk& chunk, const Merge& merge, const Finish& finish) {
  const int64_t nchunks = std::max<int64_t>(1, (inner + kReduceChunk - 1) / kReduceChunk);
  const int64_t work = outer * inner;
  if (nchunks == 1) {
    parallel_rows(outer, work, [&](int64_t r) { finish(r, chunk(r, int64_t(0), inner)); });
    return;
  }
  std::vector<Acc> parts(size_t(outer * nchunks));
  parallel_rows(outer * nchunks, work, [&](int64_t k) {
    const int64_t r = k / nchunks, c = k % nchunks;
    parts[size_t(k)] = chunk(r, c * kReduceChunk, std::min(inner, (c + 1) * kReduceChunk));
  });
  parallel_rows(outer, outer * nchunks, [&](int64_t r) { finish(r, merge_tree(parts.data() + r * nchunks, nchunks, merge)); });
}

// The float type reductions of T accumulate in.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Throws DTypeError unless t is floating: "<op>: expected a floating point input ...".
void require_floating(const Tensor& t, const char* op);

// Throws ShapeError when a reduction without identity (max, amin, ...) would reduce nothing.
void require_nonempty(const Tensor& t, const cpu::ReducePlan& plan, const char* op);

// Row-major values of a (small) per-row tensor, as double.
std::vector<double> row_values(const Tensor& t);

// Lays `rows` ([outer, inner] in the plan layout of x over `dims`) back out in x's shape.
Tensor from_rows(const Tensor& rows, const Tensor& x, const Shape& dims);

// Gradient of a reduction of floating x over `dims`, computed row by row in the plan layout:
// fn.template operator()<T>(r, x_row, grad_row, inner) with T the C++ type of x's dtype.
template <typename F>
Tensor grad_rows(const Tensor& x, const Shape& dims, const F& fn) {
  auto plan = detail::ReducePlan::make(x, dims, true, "backward");
  Tensor rows = make_tensor({plan.outer, plan.inner}, x.dtype());
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) {
      const T* in = static_cast<const T*>(plan.input.raw_data());
      T* out = static_cast<T*>(rows.raw_data());
      const int64_t inner = plan.inner;
      parallel_rows(plan.outer, plan.outer * inner,
                    [&](int64_t r) { fn.template operator()<T>(r, in + r * inner, out + r * inner, inner); });
    }
  });
  return from_rows(rows, x, plan.dims);
}

}  // namespace rt::detail
