// kernels/cuda/ternary.h — three-input elementwise ops on CUDA: where, addcmul, addcdiv.
//
//   using namespace rt::cuda_kernels;
//   where(out, cond, a, b, stream);                                  // out = cond ? a : b
//   ternary(TernaryOp::AddCMul, v, v, g, g, /*value=*/0.001, stream); // v += 0.001 * g * g
//
// Contract (see elementwise_loop.cuh): inputs have out's sizes (broadcast dims expanded with
// stride 0) and any dtype, converted on load to out.dtype; cond is read as nonzero -> true.
// out may be the same memory as an input when both have the same strides (in-place updates, as
// the optimizers do). AddCMul: a + value * b * c; AddCDiv: a + value * b / c (floating out only,
// like the CPU engine's addcmul_/addcdiv_).
#pragma once
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

enum class TernaryOp { AddCMul, AddCDiv };

void where(const TensorArg& out, const TensorArg& cond, const TensorArg& a, const TensorArg& b, cudaStream_t stream);

void ternary(TernaryOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, const TensorArg& c,
             double value, cudaStream_t stream);

}  // namespace rt::cuda_kernels
