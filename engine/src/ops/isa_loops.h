// How the engine runs the per-level CPU kernels (kernels/cpu/isa_kernels.h) over large arrays:
// in element ranges across OpenMP threads, the split of kernels/cpu/loops.h (results never depend
// on the thread count).
//
//   const auto& k = cpu::isa_kernels();
//   detail::parallel_ranges(n, [&](int64_t b, int64_t e) { k.unary_f32(op, out + b, x + b, e - b); });
//   detail::parallel_row_ranges(rows, n, [&](int64_t r0, int64_t r1) { k.softmax_rows_f32(...); });
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/isa_kernels.h"
#include "cpu/loops.h"

namespace rt::detail {

// fn(begin, end) over [0, n): one call below cpu::kParallelGrain elements, else one per thread.
template <typename F>
void parallel_ranges(int64_t n, F&& fn) {
  const int nt = cpu::num_threads();
  if (n < cpu::kParallelGrain || nt <= 1) {
    if (n > 0) fn(int64_t(0), n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(nt, (n + cpu::kParallelGrain - 1) / cpu::kParallelGrain);
#pragma omp parallel for num_threads(int(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) fn(n * c / chunks, n * (c + 1) / chunks);
}

// fn(r0, r1) over rows [0, rows) of `row_elems` elements each: one call below cpu::kParallelGrain
// elements, else one per thread (for kernels whose rows are independent of each other).
template <typename F>
void parallel_row_ranges(int64_t rows, int64_t row_elems, F&& fn) {
  const int nt = cpu::num_threads();
  const int64_t work = rows * std::max<int64_t>(row_elems, 1);
  if (work < cpu::kParallelGrain || nt <= 1 || rows < 2) {
    if (rows > 0) fn(int64_t(0), rows);
    return;
  }
  const int64_t chunks = std::min<int64_t>({int64_t(nt), rows, (work + cpu::kParallelGrain - 1) / cpu::kParallelGrain});
#pragma omp parallel for num_threads(int(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) fn(rows * c / chunks, rows * (c + 1) / chunks);
}

}  // namespace rt::detail
