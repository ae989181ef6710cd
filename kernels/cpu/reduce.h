// kernels/cpu/reduce.h — the layout every CPU reduction works on.
//
//   auto plan = rt::cpu::ReducePlan::make(x, {1, 2}, /*keepdim=*/false, "sum");
//   // plan.input is [outer, inner] contiguous: reduce each row of `inner` elements;
//   // the result has plan.out_shape (outer elements).
//
// Reduced dims are moved last and the input made contiguous, so kernels see plain rows.
#pragma once
#include "rt/tensor.h"

namespace rt::cpu {

struct ReducePlan {
  Tensor input;       // contiguous, viewed as [outer, inner]
  int64_t outer = 1;  // number of results
  int64_t inner = 1;  // elements reduced into each result
  Shape out_shape;    // with or without kept dims
  Shape kept_shape;   // out_shape with reduced dims as 1 (for broadcasting back)
  Shape dims;         // reduced dims, wrapped and sorted

  // dims empty = all dims. Throws IndexError for bad or repeated dims.
  static ReducePlan make(const Tensor& t, const Shape& dims, bool keepdim, const char* op);
  // The same without `input` (no copy): shapes and dims only, for device kernels that read
  // the tensor in place.
  static ReducePlan describe(const Tensor& t, const Shape& dims, bool keepdim, const char* op);
  // Bit d set for each reduced dim d (0 for a 0-dim tensor); kernels/cuda/reduce.h's mask.
  uint32_t dim_mask() const;
};

}  // namespace rt::cpu
