// linear()'s steps, shared with linear_pointwise (rt/ops/linear_pointwise.h), which runs the same
// checks, product and backward node but adds the bias itself:
//
//   const LinearShapes s = check_linear(x, w, bias);       // throws linear()'s errors
//   Tensor out = make_tensor(s.out_shape, x.dtype(), x.device());
//   linear_gemm(s, out, w, /*accumulate=*/false);          // out = x @ w^T
//   ... add the bias to out ...
//   record_linear_backward(s, x, w, bias, out);            // AddmmBackward0, as linear() records
#pragma once
#include <cstdint>

#include "rt/tensor.h"

namespace rt::detail {

struct LinearShapes {
  Tensor x2;        // x as rows [rows, in], a view where it can be
  int64_t rows = 0, in = 0, out_f = 0;
  Shape out_shape;  // [..., out_features]
};

LinearShapes check_linear(const Tensor& x, const Tensor& w, const Tensor& bias);
// `out` (contiguous, out_shape) seen as [rows, out_features].
Tensor linear_rows(const LinearShapes& s, const Tensor& out);
// out = x @ w^T, or out += x @ w^T when `accumulate`.
void linear_gemm(const LinearShapes& s, const Tensor& out, const Tensor& w, bool accumulate);
// The node of out = x @ w^T + bias: AddmmBackward0, or MmBackward0 without a bias; nothing when no
// input requires grad.
void record_linear_backward(const LinearShapes& s, const Tensor& x, const Tensor& w, const Tensor& bias,
                            const Tensor& out);

}  // namespace rt::detail
