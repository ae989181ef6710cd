// rt/ops/linear_pointwise.h — a linear layer and the activation after it, the activation applied in
// the same pass over the output that adds the bias.
//
//   rt::Tensor h = rt::linear_pointwise(x, fc->weight, fc->bias, rt::LinearActivation::Relu);
//   // the same values and gradients as rt::relu(rt::linear(x, fc->weight, fc->bias))
//
// nn::Sequential (C++ and Python) calls it for a Linear followed by ReLU, GELU, SiLU, Sigmoid or Tanh
// while rt::backends::cpu::fuse_linear_activation() is on (the default), as PyTorch's compiler calls
// mkldnn's _linear_pointwise; eager PyTorch runs the two ops.
//
// What changes (float32 on the CPU; anything else runs linear() and then the activation op):
// - linear() writes the bias into the output, then lets the GEMM add x @ w^T to it, then the
//   activation reads the output and writes a new tensor: three passes and two tensors. Here the GEMM
//   writes x @ w^T, and one pass per block of rows adds the bias and applies the activation while
//   the block is in cache: in place for ReLU, Sigmoid and Tanh (their gradients need only the
//   output), into a second tensor for GELU and SiLU (theirs need the input).
// - A profile shows the two ops as before, `linear` then `relu` (...), each in its module's scope
//   (`scopes`); the activation's op takes the bias as a second input, since it adds it.
// - The autograd graph is the unfused one, node for node (AddmmBackward0 or MmBackward0, then
//   ReluBackward0, ...), so the graph view, the backward debugger and hooks see what they would see.
// - Results match the unfused ops to rounding: the bias is added after the product, not before.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

enum class LinearActivation : uint8_t { Relu, Gelu, GeluTanh, Silu, Sigmoid, Tanh };

// The module scopes (rt::ModuleScope) the linear part and the activation part run in; nn::Sequential passes
// its two children's names, so each op is attributed to its module as when the modules run one by one.
struct LinearPointwiseScopes {
  std::string linear;
  std::string activation;
};

Tensor linear_pointwise(const Tensor& x, const Tensor& weight, const Tensor& bias, LinearActivation activation,
                        const LinearPointwiseScopes& scopes = {});

// "relu", "gelu" (with approximate "none" or "tanh"), "silu", "sigmoid", "tanh"; nullopt for anything else.
std::optional<LinearActivation> linear_activation_from_name(std::string_view name, std::string_view approximate = "none");

}  // namespace rt

RT_API_END
