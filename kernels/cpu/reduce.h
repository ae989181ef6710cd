// kernels/cpu/reduce.h — the layout every CPU reduction works on.
//
//   auto plan = rt::cpu::ReducePlan::describe({4, 5, 6}, {1, 2}, /*keepdim=*/false, "sum");
//   // plan.outer == 4 results, each of plan.inner == 30 elements; plan.out_shape == {4}
//   rt::cpu::TensorView rows = plan.rows_view(x);   // x's dims reordered: kept dims, then reduced ones
//   if (!rows.is_contiguous()) rt::cpu::copy_kernel(dense, rows);   // the caller's dense [outer, inner]
//
// A reduction kernel reads plain rows: [outer, inner] contiguous, one result per row. describe works
// on shapes alone (no data), so the CUDA reductions share its checks and its dim_mask().
#pragma once
#include <cstdint>

#include "tensor_view.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

struct ReducePlan {
  int64_t outer = 1;  // number of results
  int64_t inner = 1;  // elements reduced into each result
  Shape out_shape;    // with or without kept dims
  Shape kept_shape;   // out_shape with reduced dims as 1 (for broadcasting back)
  Shape dims;         // reduced dims, wrapped and sorted

  // dims empty = all dims. Throws IndexError for bad or repeated dims, naming `op`.
  static ReducePlan describe(const Shape& sizes, const Shape& dims, bool keepdim, const char* op);
  // Bit d set for each reduced dim d (0 for a 0-dim tensor); kernels/cuda/reduce.h's mask.
  uint32_t dim_mask() const;
  // The kept dims in order, then the reduced ones: the dim order of the [outer, inner] rows.
  Shape permutation(int64_t ndim) const;
  // `input` (of the shape described) with its dims in permutation() order: contiguous exactly when
  // its memory already is the [outer, inner] rows.
  TensorView rows_view(const TensorView& input) const;
};

}  // namespace rt::cpu

RT_API_END
