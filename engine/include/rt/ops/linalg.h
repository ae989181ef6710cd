// rt/ops/linalg.h — matrix products through OpenBLAS, convolution and pooling.
//
//   auto y = rt::linear(x, w, b);                  // x @ w.T + b, x: [N, in], w: [out, in]
//   auto z = rt::matmul(a, b);                     // 1-D, 2-D or batched with broadcasting
//   auto c = rt::conv2d(img, k, bias, {1, 1}, {1, 1});   // NCHW
//   auto p = rt::max_pool2d(c, {2, 2});
//
// Shape errors name both operands and the mismatching dimension, e.g.
//   matmul: [64, 784] x [128, 10]: 784 != 128 (dimension 1 of the first vs 0 of the second).
//   Hint: did you mean to transpose the second operand?
#pragma once
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);        // 2-D only
Tensor bmm(const Tensor& a, const Tensor& b);       // 3-D only, equal batch
// beta * self + alpha * (a @ b); self broadcasts to [n, m].
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

// input [N, C, L] (or [C, L]), weight [Cout, C/groups, K].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
// input [N, C, H, W] (or [C, H, W]), weight [Cout, C/groups, kH, kW]; stride/padding/dilation
// take one value for both dims or two.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, const Shape& stride = {1},
              const Shape& padding = {0}, const Shape& dilation = {1}, int64_t groups = 1);
// kernel_size/stride/padding: one or two values; stride empty = kernel_size.
Tensor max_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, const Shape& dilation = {1}, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {},
                  const Shape& padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size);

inline Tensor Tensor::matmul(const Tensor& o) const { return rt::matmul(*this, o); }
inline Tensor Tensor::mm(const Tensor& o) const { return rt::mm(*this, o); }
inline Tensor Tensor::bmm(const Tensor& o) const { return rt::bmm(*this, o); }

}  // namespace rt

RT_API_END
