// kernels/cuda/tensor_arg.h — how engine dispatch hands a tensor to a CUDA kernel launcher.
//
//   rt::cuda_kernels::TensorArg out = ...;   // filled by engine/src/cuda/tensor_args.cpp
//   rt::cuda_kernels::binary(BinaryOp::Add, out, a, b, /*alpha=*/1.0, stream);
//
// A TensorArg is a strided view of device memory: `data` points at element 0 of the view
// (storage offset already applied), sizes and strides count elements, dims are outermost
// first, and a broadcast input has stride 0 in the broadcast dims (the engine expands inputs
// to the output's shape before launching elementwise kernels). Launchers never allocate
// tensors; scratch memory comes from the caller. Every launcher takes the stream to run on and
// checks the launch (see check_launch in launch.h). Half types are stored as 16-bit values
// (__half / __nv_bfloat16 bit patterns, as rt::Half and rt::BFloat16) and computed in float.
#pragma once
#include <cstdint>

#include "rt/dtype.h"

typedef struct CUstream_st* cudaStream_t;  // the runtime's own declaration, so callers need no CUDA headers

namespace rt::cuda_kernels {

inline constexpr int kMaxDims = 8;

struct TensorArg {
  void* data = nullptr;
  ScalarType dtype = kFloat32;
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= sizes[i];
    return n;
  }
  // As PyTorch: an empty tensor is contiguous whatever its strides (the engine's are of max(size, 1)).
  bool is_contiguous() const {
    if (numel() == 0) return true;
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      if (sizes[i] != 1 && strides[i] != expected) return false;
      expected *= sizes[i];
    }
    return true;
  }
};

}  // namespace rt::cuda_kernels
