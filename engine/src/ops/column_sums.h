// engine/src/ops/column_sums.h — CPU sums over leading dims (a bias gradient: sum(0) of [N, C], or of
// [B, T, C] over (0, 1)) read in place, without the transposing copy of ReducePlan::make.
//
//   const cpu::ReducePlan plan = detail::ReducePlan::describe(x, {0}, false, "sum");
//   if (auto cols = detail::column_layout(x, plan)) {           // x's memory is [rows, cols], rows reduced
//     Tensor out = make_tensor(plan.out_shape, x.dtype());
//     detail::column_sums(x, *cols, out, 1.0);                   // divided by cols->rows for a mean
//   }
//
// Each column is summed in float64, in row order within fixed chunks of rows whose sums are added in
// order: the chunks depend on the shape alone, so results do not depend on the thread count, and they
// are the same bits at every instruction-set level (cpu::IsaKernels::sum_cols_f32).
#pragma once
#include <optional>

#include "cpu/reduce.h"
#include "rt/tensor.h"

namespace rt::detail {

struct ColumnLayout {
  int64_t rows = 1;  // reduced elements per result
  int64_t cols = 1;  // results
};

// The layout when t (float32 or float64, on the CPU) viewed with its reduced dims first, then its kept
// dims, is dense memory and both counts exceed 1; nullopt otherwise (the row kernels handle reductions
// over trailing dims without a copy).
std::optional<ColumnLayout> column_layout(const Tensor& t, const cpu::ReducePlan& plan);

// out (t's dtype, cols elements, contiguous) = the column sums / divisor (rounded once, from double).
void column_sums(const Tensor& t, const ColumnLayout& L, const Tensor& out, double divisor);

}  // namespace rt::detail
