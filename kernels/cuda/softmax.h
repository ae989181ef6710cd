// kernels/cuda/softmax.h — softmax / log_softmax over one dim, forward and backward, on CUDA.
//
//   rt::cuda_kernels::softmax_forward(y, x, /*dim=*/-1, /*log=*/false, stream);
//   rt::cuda_kernels::softmax_backward(gx, y, gy, -1, false, stream);   // y: the forward output
//
// All tensors are contiguous, of one floating dtype and the same shape; `dim` may be negative.
// Any dim works: the tensor is viewed as [outer, n, inner] around it. With inner == 1 (the last
// dim) a warp reduces each row of n <= 1024 and a block each longer row; otherwise one thread
// reduces one strided column. Rows are max-shifted; half types are accumulated in float,
// float64 in double (as the CPU engine). Backward: softmax gx = y * (g - sum(g * y)),
// log_softmax gx = g - exp(y) * sum(g).
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void softmax_forward(const TensorArg& out, const TensorArg& in, int64_t dim, bool log, cudaStream_t stream);
void softmax_backward(const TensorArg& grad_in, const TensorArg& out, const TensorArg& grad_out, int64_t dim,
                      bool log, cudaStream_t stream);

}  // namespace rt::cuda_kernels
