// linear_pointwise: linear() and an activation, the bias and the activation applied in one pass per
// block of rows after the GEMM (rt/ops/linear_pointwise.h).
#include "rt/ops/linear_pointwise.h"

#include "../amp/autocast_policy.h"
#include "activation_backward.h"
#include "cpu/isa_kernels.h"
#include "isa_loops.h"
#include "linear_parts.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/nn_functional.h"

namespace rt {
namespace {

const char* op_name(LinearActivation a) {
  switch (a) {
    case LinearActivation::Relu: return "relu";
    case LinearActivation::Gelu:
    case LinearActivation::GeluTanh: return "gelu";
    case LinearActivation::Silu: return "silu";
    case LinearActivation::Sigmoid: return "sigmoid";
    case LinearActivation::Tanh: return "tanh";
  }
  return "?";
}

cpu::VecUnary vec_op(LinearActivation a) {
  switch (a) {
    case LinearActivation::Relu: return cpu::VecUnary::Relu;
    case LinearActivation::Gelu: return cpu::VecUnary::Gelu;
    case LinearActivation::GeluTanh: return cpu::VecUnary::GeluTanh;
    case LinearActivation::Silu: return cpu::VecUnary::Silu;
    case LinearActivation::Sigmoid: return cpu::VecUnary::Sigmoid;
    case LinearActivation::Tanh: return cpu::VecUnary::Tanh;
  }
  return cpu::VecUnary::Relu;
}

// Gradients that need only the output: the activation can overwrite its input.
bool in_place(LinearActivation a) {
  return a == LinearActivation::Relu || a == LinearActivation::Sigmoid || a == LinearActivation::Tanh;
}

Tensor apply(LinearActivation a, const Tensor& t) {
  switch (a) {
    case LinearActivation::Relu: return relu(t);
    case LinearActivation::Gelu: return gelu(t, "none");
    case LinearActivation::GeluTanh: return gelu(t, "tanh");
    case LinearActivation::Silu: return silu(t);
    case LinearActivation::Sigmoid: return sigmoid(t);
    case LinearActivation::Tanh: return tanh(t);
  }
  return t;
}

void record_activation(LinearActivation a, const Tensor& in, const Tensor& out) {
  switch (a) {
    case LinearActivation::Relu: return detail::record_relu_backward(in, out);
    case LinearActivation::Gelu: return detail::record_gelu_backward(in, out, false);
    case LinearActivation::GeluTanh: return detail::record_gelu_backward(in, out, true);
    case LinearActivation::Silu: return detail::record_silu_backward(in, out);
    case LinearActivation::Sigmoid: return detail::record_sigmoid_backward(in, out);
    case LinearActivation::Tanh: return detail::record_tanh_backward(in, out);
  }
}

// The fused path takes float32 CPU tensors and a bias that is one contiguous row (or none).
bool fusable(const Tensor& x, const Tensor& w, const Tensor& bias) {
  if (!x.is_cpu() || x.dtype() != kFloat32 || !w.is_cpu() || w.dtype() != kFloat32 || w.dim() != 2) return false;
  if (!bias.defined()) return true;
  return bias.is_cpu() && bias.dtype() == kFloat32 && bias.dim() == 1 && bias.size(0) == w.size(0) &&
         bias.is_contiguous();
}

}  // namespace

std::optional<LinearActivation> linear_activation_from_name(std::string_view name, std::string_view approximate) {
  if (name == "gelu") {
    if (approximate == "none") return LinearActivation::Gelu;
    if (approximate == "tanh") return LinearActivation::GeluTanh;
    return std::nullopt;
  }
  if (name == "relu") return LinearActivation::Relu;
  if (name == "silu") return LinearActivation::Silu;
  if (name == "sigmoid") return LinearActivation::Sigmoid;
  if (name == "tanh") return LinearActivation::Tanh;
  return std::nullopt;
}

Tensor linear_pointwise(const Tensor& x, const Tensor& w, const Tensor& bias, LinearActivation activation,
                        const LinearPointwiseScopes& scopes) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&x, &w, &bias}); ac)
    return linear_pointwise(ac[0], ac[1], ac[2], activation, scopes);
  if (!fusable(x, w, bias)) {
    Tensor y;
    {
      ModuleScope m(scopes.linear);
      y = linear(x, w, bias);
    }
    ModuleScope m(scopes.activation);
    return apply(activation, y);
  }
  Tensor pre, out;
  detail::LinearShapes s;
  {
    ModuleScope m(scopes.linear);
    OpGuard guard("linear", x, w, bias);
    s = detail::check_linear(x, w, bias);
    pre = make_tensor(s.out_shape, kFloat32);
    detail::linear_gemm(s, pre, w, /*accumulate=*/false);
    // In place, the tensor returned and `pre` share one buffer: `pre` is only the linear node's output
    // and the activation node's input in the graph; the activation's gradient reads `out`.
    out = in_place(activation) ? pre : make_tensor(s.out_shape, kFloat32);
    if (in_place(activation)) pre = make_view(out, out.sizes(), out.strides(), 0);
    detail::record_linear_backward(s, x, w, bias, pre);
  }
  ModuleScope m(scopes.activation);
  OpGuard guard(op_name(activation), pre, bias);  // the bias is added in this pass
  const cpu::IsaKernels& k = cpu::isa_kernels();
  const cpu::VecUnary op = vec_op(activation);
  float* p = static_cast<float*>(pre.raw_data());
  float* o = static_cast<float*>(out.raw_data());
  const float* b = bias.defined() ? static_cast<const float*>(bias.raw_data()) : nullptr;
  const int64_t n = s.out_f;
  detail::parallel_row_ranges(s.rows, n, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* pr = p + r * n;
      if (b) k.binary_f32(cpu::VecBinary::Add, pr, pr, 1, b, 1, n, 1.0f);
      k.unary_f32(op, o + r * n, pr, n);
    }
  });
  if (autograd::any_requires_grad(pre)) record_activation(activation, pre, out);
  return out;
}

}  // namespace rt
