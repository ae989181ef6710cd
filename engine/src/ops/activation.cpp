// Activations: sigmoid, relu, leaky_relu, gelu, silu, softplus.
// Lambdas marked always_inline: see Note [Inlined kernel lambdas] in pointwise.h.
#include <string>

#include "../amp/autocast_policy.h"
#include "activation_backward.h"
#include "pointwise.h"
#include "rt/ops/elementwise.h"

namespace rt {
using detail::blend;
using detail::map_float;
using detail::record_unary;
using detail::verf;
using detail::vexp;
using detail::vsigmoid;
using detail::vtanh;

namespace {
constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi), the normal pdf at 0
constexpr double kSqrt2_Pi = 0.79788456080286535588;    // sqrt(2 / pi)
constexpr double kGeluKappa = 0.044715;
}  // namespace

namespace detail {

void record_relu_backward(const Tensor& in, const Tensor& out) {
  record_unary("ReluBackward0", "threshold_backward", in, out, out,
               [](auto g, auto r) { return r > decltype(r)(0) ? g : decltype(g)(0); },
               DeviceUnaryBackward{dispatch::UnaryBackwardOp::Threshold});
}

void record_sigmoid_backward(const Tensor& in, const Tensor& out) {
  record_unary("SigmoidBackward0", "sigmoid_backward", in, out, out,
               [](auto g, auto s) { return g * s * (decltype(s)(1) - s); },
               DeviceUnaryBackward{dispatch::UnaryBackwardOp::Sigmoid});
}

void record_gelu_backward(const Tensor& in, const Tensor& out, bool tanh_approximation) {
  if (!tanh_approximation) {
    record_unary("GeluBackward0", "gelu_backward", in, out, in, [](auto g, auto x) __attribute__((always_inline)) {
      using C = decltype(x);
      const C cdf = C(0.5) * (C(1) + verf(x * C(kSqrt1_2)));
      const C pdf = vexp(C(-0.5) * x * x) * C(kInvSqrt2Pi);
      return g * (cdf + x * pdf);
    }, DeviceUnaryBackward{dispatch::UnaryBackwardOp::Gelu});
    return;
  }
  record_unary("GeluBackward0", "gelu_backward", in, out, in, [](auto g, auto x) __attribute__((always_inline)) {
    using C = decltype(x);
    const C x2 = x * x;
    const C t = vtanh(C(kSqrt2_Pi) * (x + C(kGeluKappa) * x2 * x));
    const C left = C(0.5) * (C(1) + t);
    const C right = C(0.5) * x * (C(1) - t * t) * C(kSqrt2_Pi) * (C(1) + C(3 * kGeluKappa) * x2);
    return g * (left + right);
  }, DeviceUnaryBackward{dispatch::UnaryBackwardOp::GeluTanh});
}

void record_silu_backward(const Tensor& in, const Tensor& out) {
  record_unary("SiluBackward0", "silu_backward", in, out, in, [](auto g, auto x) __attribute__((always_inline)) {
    using C = decltype(x);
    const C s = vsigmoid(x);
    return g * s * (C(1) + x * (C(1) - s));
  }, DeviceUnaryBackward{dispatch::UnaryBackwardOp::Silu});
}

}  // namespace detail

Tensor sigmoid(const Tensor& a) {
  OpGuard guard("sigmoid", a);
  Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) { return vsigmoid(x); }, detail::DeviceUnary{dispatch::UnaryOp::Sigmoid});
  if (autograd::any_requires_grad(a)) detail::record_sigmoid_backward(a, out);
  return out;
}

Tensor relu(const Tensor& a) {
  OpGuard guard("relu", a);
  if (a.dtype() == kBool)
    throw DTypeError("relu: Boolean inputs not supported for relu. Hint: convert with .to(rt::kFloat32) first");
  Tensor out = detail::map_same(a, [](auto x) { return x < decltype(x)(0) ? decltype(x)(0) : x; }, detail::DeviceUnary{dispatch::UnaryOp::Relu});
  if (autograd::any_requires_grad(a)) detail::record_relu_backward(a, out);
  return out;
}

Tensor leaky_relu(const Tensor& a, double negative_slope) {
  OpGuard guard("leaky_relu", a);
  Tensor out = map_float(a, [negative_slope](auto x) {
    return blend(x > decltype(x)(0), x, x * decltype(x)(negative_slope));
  }, detail::DeviceUnary{dispatch::UnaryOp::LeakyRelu, {.negative_slope = negative_slope}});
  if (autograd::any_requires_grad(a))
    record_unary("LeakyReluBackward0", "leaky_relu_backward", a, out, a, [negative_slope](auto g, auto x) {
      return blend(x > decltype(x)(0), g, g * decltype(g)(negative_slope));
    }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::LeakyRelu, {.negative_slope = negative_slope}});
  return out;
}

Tensor gelu(const Tensor& a, const std::string& approximate) {
  OpGuard guard("gelu", a);
  if (approximate == "none") {
    Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + verf(x * C(kSqrt1_2)));
    }, detail::DeviceUnary{dispatch::UnaryOp::Gelu});
    if (autograd::any_requires_grad(a)) detail::record_gelu_backward(a, out, false);
    return out;
  }
  if (approximate == "tanh") {
    Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + vtanh(C(kSqrt2_Pi) * (x + C(kGeluKappa) * x * x * x)));
    }, detail::DeviceUnary{dispatch::UnaryOp::GeluTanh});
    if (autograd::any_requires_grad(a)) detail::record_gelu_backward(a, out, true);
    return out;
  }
  throw ValueError("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}

Tensor silu(const Tensor& a) {
  OpGuard guard("silu", a);
  Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) { return x * vsigmoid(x); }, detail::DeviceUnary{dispatch::UnaryOp::Silu});
  if (autograd::any_requires_grad(a)) detail::record_silu_backward(a, out);
  return out;
}

// (1 / beta) * log(1 + exp(beta * x)), and x itself where beta * x > threshold.
Tensor softplus(const Tensor& a, double beta, double threshold) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac)
    return softplus(ac[0], beta, threshold);
  OpGuard guard("softplus", a);
  Tensor out = map_float(a, [beta, threshold](auto x) {
    using C = decltype(x);
    const C bx = x * C(beta);
    return bx > C(threshold) ? x : std::log1p(vexp(bx)) / C(beta);
  }, detail::DeviceUnary{dispatch::UnaryOp::Softplus, {.beta = beta, .threshold = threshold}});
  if (autograd::any_requires_grad(a))
    record_unary("SoftplusBackward0", "softplus_backward", a, out, a,
                 [beta, threshold](auto g, auto x) __attribute__((always_inline)) {
                   using C = decltype(x);
                   const C bx = x * C(beta);
                   return blend(bx > C(threshold), g, g * vsigmoid(bx));
                 }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Softplus, {.beta = beta, .threshold = threshold}});
  return out;
}

}  // namespace rt
