// rt/ops/scan.h — cumulative operations along a dim.
//
//   auto c = x.cumsum(0);                               // c[i] = x[0] + ... + x[i]
//   auto p = rt::cumprod(x, -1, rt::kFloat64);          // computed and returned in float64
//   auto [run_max, at] = x.cummax(1);                   // running max and the index it came from
//   auto lse = x.logcumsumexp(1);                       // log(cumsum(exp(x))) without overflow
//
// cumsum/cumprod of bool and integer inputs give int64 unless dtype says otherwise (the input
// is converted to dtype first); floating rows are accumulated in float64 and each output rounded
// to the result dtype, as PyTorch's CPU kernels do. cummax/cummin keep the dtype and give int64
// indices: ties take the later index and a NaN, once seen, stays (each later NaN takes over the
// index), as PyTorch. logcumsumexp needs a floating input (DTypeError otherwise).
// Gradients, as PyTorch 1.13: cumsum's is the reversed cumulative sum of the gradient; cumprod's
// is exact where the input holds zeros (per row, elements after the first zero get 0, the first
// zero gets the sum of the products that skip it); cummax/cummin pass each gradient to the index
// it came from (summed); logcumsumexp's is computed in log space from the output.
// A dim outside [-ndim, ndim) throws IndexError naming the op, the dim and the valid range.
// Devices: CPU. A tensor on a GPU throws DeviceError naming the op and the device (move it with
// .cpu() first); docs/cuda.md lists the ops that run on CUDA.
#pragma once
#include <optional>
#include <utility>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
std::pair<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
Tensor logcumsumexp(const Tensor& t, int64_t dim);

inline Tensor Tensor::cumsum(int64_t d, std::optional<ScalarType> dt) const { return rt::cumsum(*this, d, dt); }
inline Tensor Tensor::cumprod(int64_t d, std::optional<ScalarType> dt) const { return rt::cumprod(*this, d, dt); }
inline std::pair<Tensor, Tensor> Tensor::cummax(int64_t d) const { return rt::cummax(*this, d); }
inline std::pair<Tensor, Tensor> Tensor::cummin(int64_t d) const { return rt::cummin(*this, d); }
inline Tensor Tensor::logcumsumexp(int64_t d) const { return rt::logcumsumexp(*this, d); }

}  // namespace rt

RT_API_END
