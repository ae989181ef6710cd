// kernels/cuda/pooling.h — 2-D max/avg/adaptive-avg pooling over NCHW planes on CUDA.
//
//   rt::cuda_kernels::PoolWindow w{/*kH*/2, /*kW*/2, /*sH*/2, /*sW*/2};   // padding 0, dilation 1
//   rt::cuda_kernels::max_pool2d_forward(out, indices, x, w, stream);    // out/indices [N, C, oH, oW]
//   rt::cuda_kernels::max_pool2d_backward(gx, gy, indices, stream);
//
// Semantics of engine/src/ops/pool.cpp. The engine computes the output size (ceil_mode included)
// and passes tensors whose last two dims are H, W (input) and oH, oW (output); the leading dims are
// independent planes. All tensors contiguous, float16/bfloat16/float32/float64 (indices int64).
// max: the first maximum of each window in row-major window order wins, a NaN wins over any
// number; indices hold ih * W + iw within the plane (-1, value lowest(), for a window entirely in padding).
// avg: the window is clipped to the padded input; the divisor is the padded window size
// (count_include_pad) or the clipped one; an empty clipped window gives 0.
// adaptive avg: rows [floor(o * H / oH), ceil((o + 1) * H / oH)), columns likewise.
// Backward kernels gather (one thread per input element, outputs visited in ascending order), so
// sums are deterministic and in the CPU's order.
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

struct PoolWindow {
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
};

void max_pool2d_forward(const TensorArg& out, const TensorArg& indices, const TensorArg& input, const PoolWindow& w,
                        cudaStream_t stream);
void max_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& indices,
                         const PoolWindow& w, cudaStream_t stream);
void avg_pool2d_forward(const TensorArg& out, const TensorArg& input, const PoolWindow& w, bool count_include_pad,
                        cudaStream_t stream);
void avg_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, const PoolWindow& w,
                         bool count_include_pad, cudaStream_t stream);
void adaptive_avg_pool2d_forward(const TensorArg& out, const TensorArg& input, cudaStream_t stream);
void adaptive_avg_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, cudaStream_t stream);

}  // namespace rt::cuda_kernels
