// Internal: gather, index_select and their scatter-add backward on CUDA tensors, called from
// engine/src/ops/index.cpp when the operands are on a GPU (kernels/cuda/index.h).
//
//   Tensor out = make_tensor(index.sizes(), t.dtype(), t.device());
//   cuda::ops::gather(out, t, dim, index);   // rt::IndexError for an index outside [0, t.size(dim))
//
// The calling op has checked shapes and dtypes, resolved the device (op_device.h), moved every
// operand there, and turned 0-dim operands into 1-element vectors. `index` is int64 and
// contiguous; `out` is contiguous; `t` and `src` may be views with any strides. The index range
// is checked on the device: each call waits for the device's stream once to read the result.
// Built with the CUDA backend (ops_index.cpp); engine/src/cuda/stub/ otherwise, where they
// cannot be reached (no tensor can be on a GPU) and throw if they are.
#pragma once
#include <cstdint>

#include "rt/tensor.h"

namespace rt::cuda::ops {

// out = t.index_select(dim, index): index 1-D, out's sizes t's with out.size(dim) = index.numel().
void index_select(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index);
// out = t.gather(dim, index): out has index's sizes, which fit in t outside dim.
void gather(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index);
// out[p with p[dim] = index[p]] += src[p] for p over index's shape, in place; any dtype.
// Floating sums use atomics: their order, and so the last bits, are not fixed.
void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
// out[..., index[k], ...] += src[..., k, ...] in place (index_add, the backward of index_select):
// index 1-D with src.size(dim) values, src's sizes out's outside dim.
void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace rt::cuda::ops
