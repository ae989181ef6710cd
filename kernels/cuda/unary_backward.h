// kernels/cuda/unary_backward.h — fused backward kernels of the unary math ops and activations.
//
//   using namespace rt::cuda_kernels;
//   // y = sigmoid(x) saved y; in backward:
//   unary_backward(UnaryBackwardOp::Sigmoid, grad_x, grad_y, y, {}, stream);   // grad_x = grad_y * y * (1 - y)
//   unary_backward(UnaryBackwardOp::LeakyRelu, grad_x, grad_y, x, {.negative_slope = 0.2}, stream);
//
// grad_in = f'(saved) * grad_out with exactly the formulas of the CPU engine's record_unary
// lambdas (engine/src/ops/unary.cpp and activation.cpp), written in the same order of
// operations. Which tensor `saved` is (the op's output or its input) is fixed per op and noted
// in the enum. Contract (see elementwise_loop.cuh): grad_out and saved have grad_in's sizes
// (broadcast inputs expanded by the caller), any strides and dtypes; both are rounded to
// grad_in.dtype on load, which must be floating. The CPU's map_grad computes in saved's dtype
// and converts the gradient to it first, so the engine passes grad_in with saved's dtype.
// Half types compute in float, float64 in double. Transcendentals are CUDA's (::exp, ::erf,
// ::tanh), the CPU's float32 ones are Cephes-style polynomials: results agree to a few ulp,
// not bit for bit. Errors: DTypeError for a non-floating grad_in, ShapeError for inputs not of
// grad_in's sizes.
#pragma once
#include "cuda/tensor_arg.h"
#include "cuda/unary.h"  // UnaryParams (negative_slope, beta, threshold)

namespace rt::cuda_kernels {

enum class UnaryBackwardOp {
  Threshold,   // relu, saved = output: r > 0 ? g : 0
  Sigmoid,     // saved = output: g * s * (1 - s)
  Tanh,        // saved = output: g * (1 - r * r)
  Exp,         // saved = output: g * r
  Log,         // saved = input: g / x
  Log1p,       // saved = input: g / (x + 1)
  Sqrt,        // saved = output: g / (2 * r)
  Rsqrt,       // saved = output: -0.5 * g * r * r * r
  Reciprocal,  // saved = output: -g * r * r
  Sin,         // saved = input: g * cos(x)
  Cos,         // saved = input: -g * sin(x)
  Abs,         // saved = input: x > 0 ? g : (x < 0 ? -g : 0)
  LeakyRelu,   // saved = input: x > 0 ? g : g * negative_slope
  Gelu,        // saved = input: g * (cdf(x) + x * pdf(x))
  GeluTanh,    // saved = input: derivative of the tanh approximation
  Silu,        // saved = input: g * s * (1 + x * (1 - s)), s = sigmoid(x)
  Softplus,    // saved = input: beta * x > threshold ? g : g * sigmoid(beta * x)
};

void unary_backward(UnaryBackwardOp op, const TensorArg& grad_in, const TensorArg& grad_out, const TensorArg& saved,
                    const UnaryParams& params, cudaStream_t stream);

const char* unary_backward_op_name(UnaryBackwardOp op);  // "sigmoid_backward", "threshold_backward", ...

}  // namespace rt::cuda_kernels
