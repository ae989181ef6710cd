// Element-wise reductions for backends whose library takes a reduction function (gloo's
// setReduceFunction): out[i] = op(a[i], b[i]) for every dtype, float16 and bfloat16 through float.
// Bool follows PyTorch: Sum and Max are logical or, Product and Min logical and.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rt/dist/process_group.h"

namespace rt::dist::detail {

using ReduceFunction = void (*)(void* out, const void* a, const void* b, size_t n);

// The function for `op` on `dtype`; Avg reduces as Sum (divide_in_place finishes it).
ReduceFunction reduce_function(ScalarType dtype, ReduceOp op);
// data[i] /= divisor, for floating-point dtypes (Avg's last step).
void divide_in_place(void* data, ScalarType dtype, size_t n, int64_t divisor);

}  // namespace rt::dist::detail
