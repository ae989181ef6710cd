// kernels/cuda/unary.h — elementwise unary math and activations on CUDA, and clamp.
//
//   using namespace rt::cuda_kernels;
//   unary(UnaryOp::Gelu, out, x, {}, stream);                       // erf form
//   unary(UnaryOp::LeakyRelu, out, x, {.negative_slope = 0.2}, stream);
//   clamp(out, x, rt::Scalar(0.0), rt::Scalar(6.0), /*has_min=*/true, /*has_max=*/true, stream);
//
// Contract (see elementwise_loop.cuh): x has out's sizes and any dtype. Value ops compute in
// out.dtype: the caller picks it as the CPU engine does (x's dtype; float32 for the
// floating-only functions of integer or bool inputs). IsNan, IsInf and LogicalNot write a
// bool out and compute in x's dtype. Formulas follow engine/src/ops/unary.cpp, activation.cpp
// and pow_clamp.cpp (sigmoid as e / (1 + e) below 0, softplus linear above `threshold`, clamp
// returning NaN for a NaN bound). Scalar arithmetic (x + s, x * s, x ** s) is binary_scalar in
// binary.h. Errors: DTypeError for floating-only ops with a non-floating out, for Neg, Abs,
// Relu and Square on bool, and for a non-bool out of the predicates.
#pragma once
#include "cuda/tensor_arg.h"
#include "rt/scalar.h"

namespace rt::cuda_kernels {

enum class UnaryOp {
  Neg, Abs, Sign, Square,                                      // any dtype but bool
  Exp, Log, Log1p, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tanh,    // floating out
  Sigmoid, Relu, LeakyRelu, Gelu, GeluTanh, Silu, Softplus,    // floating out (Relu: any but bool)
  IsNan, IsInf, LogicalNot,                                    // bool out
};

// Parameters of the ops that take them; the defaults are PyTorch's.
struct UnaryParams {
  double negative_slope = 0.01;  // LeakyRelu
  double beta = 1.0;             // Softplus
  double threshold = 20.0;       // Softplus
};

void unary(UnaryOp op, const TensorArg& out, const TensorArg& x, const UnaryParams& params, cudaStream_t stream);

// out = min(max(x, lo), hi) with either bound optional, computed in out.dtype (clamp's
// result_type); a NaN bound gives NaN everywhere for floating out, as on the CPU.
void clamp(const TensorArg& out, const TensorArg& x, const Scalar& lo, const Scalar& hi, bool has_min, bool has_max,
           cudaStream_t stream);

const char* unary_op_name(UnaryOp op);  // "neg", "gelu", ...

}  // namespace rt::cuda_kernels
