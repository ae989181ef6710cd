// The autograd nodes of the activations, recorded for out = f(in): ReluBackward0, SigmoidBackward0,
// TanhBackward0, GeluBackward0, SiluBackward0. The activation ops and linear_pointwise (which
// computes `out` itself) record them through these, so both build the same node.
//
//   Tensor out = ...;                                   // relu(in), computed any way
//   if (autograd::any_requires_grad(in)) detail::record_relu_backward(in, out);
//
// ReLU, Sigmoid and Tanh save `out` (their gradients need only the output); GELU and SiLU save `in`.
#pragma once
#include "rt/tensor.h"

namespace rt::detail {

void record_relu_backward(const Tensor& in, const Tensor& out);      // activation.cpp
void record_sigmoid_backward(const Tensor& in, const Tensor& out);   // activation.cpp
void record_gelu_backward(const Tensor& in, const Tensor& out, bool tanh_approximation);  // activation.cpp
void record_silu_backward(const Tensor& in, const Tensor& out);      // activation.cpp
void record_tanh_backward(const Tensor& in, const Tensor& out);      // unary.cpp

}  // namespace rt::detail
