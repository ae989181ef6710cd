// rt/ops/select.h — picking elements by mask or by flat and per-dim indices.
//
//   auto where_pos = x.nonzero();                       // int64 [count, ndim], row-major order
//   auto positives = x.masked_select(x.gt(rt::scalar_tensor(0)));   // 1-D
//   auto corners = x.take(rt::from_vector(std::vector<int64_t>{0, -1}));   // flat indices, negatives wrap
//   auto picked = x.take_along_dim(x.argsort(1), 1);    // x sorted along dim 1
//
// nonzero/argwhere: the positions of elements that are not zero (NaN counts as not zero); a 0-dim
// input gives [1, 0] or [0, 0]. masked_select: the elements of input where the bool mask is true
// (the two broadcast together), row-major. take: input seen as 1-D, index int64 of any shape
// with values in [-numel, numel); the result has index's shape. take_along_dim: without dim,
// take on the flattened input without negative indices; with dim, gather along dim after
// broadcasting input and indices (int64, as many dims as input) in every other dim.
// Gradients: masked_select, take and take_along_dim pass gradients back to the picked elements
// (summed where picked twice); nonzero/argwhere give int64 and need none.
// Devices: all work on CUDA. nonzero, argwhere and masked_select copy the mask to the host and the
// positions back, as PyTorch's nonzero synchronises; take checks its index range by reading back
// the index's min and max. Bad index dtypes throw DTypeError, out-of-range indices IndexError.
#pragma once
#include <optional>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor nonzero(const Tensor& t);
TensorList nonzero_tuple(const Tensor& t);  // nonzero(t) split into one 1-D int64 tensor per dim (>= 1)
Tensor argwhere(const Tensor& t);           // nonzero(t)
Tensor masked_select(const Tensor& t, const Tensor& mask);
Tensor take(const Tensor& t, const Tensor& index);
Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);

inline Tensor Tensor::nonzero() const { return rt::nonzero(*this); }
inline Tensor Tensor::argwhere() const { return rt::argwhere(*this); }
inline Tensor Tensor::masked_select(const Tensor& m) const { return rt::masked_select(*this, m); }
inline Tensor Tensor::take(const Tensor& i) const { return rt::take(*this, i); }
inline Tensor Tensor::take_along_dim(const Tensor& i, std::optional<int64_t> d) const { return rt::take_along_dim(*this, i, d); }

}  // namespace rt

RT_API_END
