#include "tensor_view.h"

#include <algorithm>

namespace rt::cpu {

TensorView TensorView::dense(void* data, ScalarType dtype, const Shape& sizes) {
  if (sizes.size() > size_t(kMaxDims))
    throw NotImplementedError("CPU kernels take tensors of at most " + std::to_string(kMaxDims) +
                              " dimensions, got " + std::to_string(sizes.size()) + "; reshape it first");
  TensorView v;
  v.data = static_cast<char*>(data);
  v.dtype = dtype;
  v.ndim = int(sizes.size());
  int64_t stride = 1;
  for (int i = v.ndim - 1; i >= 0; --i) {
    v.sizes[i] = sizes[size_t(i)];
    v.strides[i] = stride;
    stride *= std::max<int64_t>(sizes[size_t(i)], 1);
  }
  return v;
}

bool TensorView::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

TensorView TensorView::permuted(const Shape& perm) const {
  if (int(perm.size()) != ndim) throw IndexError("permuted: " + std::to_string(perm.size()) + " dims for a view of " + std::to_string(ndim));
  TensorView v = *this;
  for (int i = 0; i < ndim; ++i) {
    const int64_t d = perm[size_t(i)];
    if (d < 0 || d >= ndim) throw IndexError("permuted: dim " + std::to_string(d) + " out of range for " + std::to_string(ndim) + " dims");
    v.sizes[i] = sizes[d];
    v.strides[i] = strides[d];
  }
  return v;
}

}  // namespace rt::cpu
