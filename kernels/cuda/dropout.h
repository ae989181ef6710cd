// kernels/cuda/dropout.h — inverted dropout on CUDA with the CPU engine's Philox mask.
//
//   const uint64_t offset = rt::default_generator().reserve(rt::cuda_kernels::dropout_counters(x.numel(), x.dtype));
//   rt::cuda_kernels::dropout_forward(out, mask, x, p, rt::default_generator().seed(), offset, stream);
//   rt::cuda_kernels::dropout_backward(gx, gy, mask, 1.0 / (1.0 - p), stream);
//
// engine/src/ops/embedding_dropout.cpp draws u = rand(x.shape) in float32 (float64 for a float64
// x), keeps element i when u[i] < float(1 - p) and scales kept values by 1 / (1 - p). Here
// element i's u comes from the same Philox word (random_fill.h: counter offset + i / 4, word i % 4;
// /2 and 64-bit words for float64) with the same exact arithmetic, so for one seed and offset
// the CUDA mask equals the CPU's bit for bit, and rt::manual_seed keeps both devices in step
// provided the caller reserves dropout_counters() counters, as rand() would on the CPU.
// x, out (x's dtype) and mask (bool) are contiguous and the same size; 0 < p < 1 (the engine
// handles p == 0, p == 1 and eval mode without a kernel, as the CPU does).
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

uint64_t dropout_counters(int64_t n, ScalarType dtype);

void dropout_forward(const TensorArg& out, const TensorArg& mask, const TensorArg& x, double p, uint64_t seed,
                     uint64_t offset, cudaStream_t stream);
void dropout_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& mask, double scale,
                      cudaStream_t stream);

}  // namespace rt::cuda_kernels
