// kernels/cuda/copy.h — strided copy with dtype conversion, fill, arange and linspace on CUDA.
//
//   using namespace rt::cuda_kernels;
//   copy(dst, src, stream);                         // dst = src.to(dst.dtype), any strides
//   fill(out, rt::Scalar(0.0), stream);             // every element of a strided out
//   arange(out, rt::Scalar(0), rt::Scalar(2), stream);           // 0, 2, 4, ... (out is 1-D)
//   linspace(out, 0.0, 1.0, stream);                              // out.sizes[0] points
//
// copy: src has dst's sizes (expand broadcast dims with stride 0 first) and any of the 8
// dtypes; values convert as the CPU engine's copy_ does (nonzero -> true for bool, truncation
// toward zero for float -> integer, round to nearest even for the half types, wrapping for
// narrow integers). Same-dtype contiguous copies are one cudaMemcpyAsync. dst must not overlap
// src (copy through a temporary when it does, as the CPU engine does).
// fill: the value converts like rt::Scalar::to<T>(). arange/linspace fill a 1-D out with the
// CPU engine's formulas (range.cpp): start + i * step, exact integers when start and step are
// integral and out is integral; linspace is symmetric from both ends so its last point is end.
#pragma once
#include "cuda/tensor_arg.h"
#include "rt/scalar.h"

namespace rt::cuda_kernels {

void copy(const TensorArg& dst, const TensorArg& src, cudaStream_t stream);
void fill(const TensorArg& out, const Scalar& value, cudaStream_t stream);
void arange(const TensorArg& out, const Scalar& start, const Scalar& step, cudaStream_t stream);
void linspace(const TensorArg& out, double start, double end, cudaStream_t stream);

}  // namespace rt::cuda_kernels
