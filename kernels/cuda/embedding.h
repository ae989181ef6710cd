// kernels/cuda/embedding.h — embedding row gather and its scatter-add backward on CUDA.
//
//   rt::cuda_kernels::embedding_forward(out, weight, indices, flag_scratch, stream);  // IndexError on a bad index
//   size_t bytes = rt::cuda_kernels::embedding_backward_scratch_bytes(grad_weight);
//   rt::cuda_kernels::embedding_backward(grad_weight, grad_out, indices, padding_idx, scratch, stream);
//
// weight [V, D] contiguous, any dtype (rows are copied as bytes); indices int64 contiguous, any
// shape with n elements; out [n..., D] contiguous, weight's dtype. flag_scratch is
// kDeviceErrorFlagBytes of device memory (device_error_flag.h): an index outside [0, V) throws
// rt::IndexError naming it and V, after a stream synchronisation (as the CPU engine checks).
// Backward: grad_weight [V, D] (float16/bfloat16/float32/float64) is overwritten with the sums of
// grad_out rows per index, rows whose index equals padding_idx skipped (pass a negative
// padding_idx for none). Sums use atomicAdd in float (double for float64); the half types add
// into a float scratch of embedding_backward_scratch_bytes() and are rounded once at the end.
// The order of the additions is not fixed, so results can differ from the CPU's in-order sums
// in the last bits.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda/device_error_flag.h"
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void embedding_forward(const TensorArg& out, const TensorArg& weight, const TensorArg& indices, void* flag_scratch,
                       cudaStream_t stream);

size_t embedding_backward_scratch_bytes(const TensorArg& grad_weight);

void embedding_backward(const TensorArg& grad_weight, const TensorArg& grad_out, const TensorArg& indices,
                        int64_t padding_idx, void* scratch, cudaStream_t stream);

}  // namespace rt::cuda_kernels
