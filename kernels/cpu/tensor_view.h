// kernels/cpu/tensor_view.h — how the engine hands a tensor to a CPU kernel: a plain strided view.
//
//   rt::cpu::TensorView out = rt::cpu_view(result);        // engine/src/ops/cpu_view.h fills it
//   rt::cpu::TensorView a = rt::cpu_view(x).permuted({1, 0});
//   rt::cpu::copy_kernel(out, a);                           // out = x.T, no engine op runs
//
// A TensorView is a strided view of host memory: `data` points at element 0 of the view (storage
// offset already applied), sizes and strides count elements, dims are outermost first, and a
// broadcast operand has stride 0 (or size 1) in its broadcast dims. CPU kernels see only views:
// they never create tensors, run engine ops, record autograd or throw the engine's cancellation;
// what they need allocated (dense copies, outputs) the engine allocates and passes in.
// The CUDA side's counterpart is kernels/cuda/tensor_arg.h.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "rt/dtype.h"
#include "rt/error.h"
#include "rt/export.h"
#include "rt/shape.h"

RT_API_BEGIN

namespace rt::cpu {

inline constexpr int kMaxDims = 16;

struct TensorView {
  char* data = nullptr;
  ScalarType dtype = kFloat32;
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  // A contiguous view of `data` with the given sizes. Throws NotImplementedError past kMaxDims.
  static TensorView dense(void* data, ScalarType dtype, const Shape& sizes);

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
  size_t element_size() const { return rt::element_size(dtype); }
  template <typename T> T* data_as() const { return reinterpret_cast<T*>(data); }
  Shape shape() const { return Shape(sizes, sizes + ndim); }
  // As PyTorch: size-1 dims may have any stride, and an empty view is contiguous.
  bool is_contiguous() const;
  // The same memory with dims reordered: result dim i is this view's dim perm[i] (a valid permutation).
  TensorView permuted(const Shape& perm) const;
};

}  // namespace rt::cpu

RT_API_END
