// Internal (CUDA builds): rt::Tensor -> the TensorArg kernels take, and scratch memory.
//
//   auto out = cuda::detail::arg(result);                  // throws for more than 8 dims
//   auto a = cuda::detail::arg(x.expand(result.sizes()));  // broadcast: stride 0
//   Tensor scratch = cuda::detail::scratch(result.device(), bytes);  // uint8 tensor, freed with it
#pragma once
#include "../../kernels/cuda/tensor_arg.h"
#include "rt/tensor.h"

namespace rt::cuda::detail {

cuda_kernels::TensorArg arg(const Tensor& t);
// A byte buffer from the device's caching allocator (undefined tensor when bytes == 0).
Tensor scratch(Device device, size_t bytes);
// The stream ops on `d` launch on, typed.
cudaStream_t stream_of(Device d);

}  // namespace rt::cuda::detail
