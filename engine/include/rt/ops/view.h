// rt/ops/view.h — views: new geometry over the same storage, differentiable.
//
//   auto x = rt::arange(12).view({3, 4});
//   auto c = x.t();                 // [4, 3], shares storage, not contiguous
//   auto d = c.contiguous();        // copies into a new contiguous buffer
//   x.select(0, 1).fill_(0);        // writes through the view into x
//
// reshape returns a view when the strides allow and a copy otherwise; view throws
// ShapeError when the strides do not allow it, as PyTorch does.
#pragma once
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor view(const Tensor& t, const Shape& shape);   // one -1 allowed
Tensor reshape(const Tensor& t, const Shape& shape);
Tensor permute(const Tensor& t, const Shape& dims);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor squeeze(const Tensor& t, std::optional<int64_t> d = std::nullopt);
Tensor unsqueeze(const Tensor& t, int64_t d);
Tensor expand(const Tensor& t, const Shape& shape);  // -1 keeps a size
Tensor narrow(const Tensor& t, int64_t d, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
Tensor select(const Tensor& t, int64_t d, int64_t index);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
Tensor to_dtype(const Tensor& t, ScalarType dtype);  // differentiable between floating types
// Differentiable copy to another device. non_blocking: a copy from pinned memory
// (rt::cuda::pin_memory) to a GPU is queued on that device's current stream and to_device returns
// at once; every other copy is complete (as far as the host can tell) when it returns.
Tensor to_device(const Tensor& t, Device device, bool non_blocking = false);
Tensor detach(const Tensor& t);

// Shape two tensors broadcast to; throws ShapeError naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace rt

RT_API_END
