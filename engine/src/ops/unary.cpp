// Unary math: abs, sign, exp, log, log1p, sqrt, rsqrt, reciprocal, sin, cos, tanh.
// Lambdas marked always_inline: see Note [Inlined kernel lambdas] in pointwise.h.
#include "../amp/autocast_policy.h"
#include "activation_backward.h"
#include "pointwise.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using detail::map_float;
using detail::record_unary;

Tensor abs(const Tensor& a) {
  OpGuard guard("abs", a);
  if (a.dtype() == kBool)
    throw DTypeError("abs: bool tensors are not supported (as in PyTorch). Hint: convert with .to(rt::kInt64) first");
  Tensor out = detail::map_same(a, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
    else if constexpr (std::is_unsigned_v<C>) return x;
    else return x < 0 ? C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x)) : x;  // INT_MIN stays, no UB
  }, detail::DeviceUnary{dispatch::UnaryOp::Abs});
  if (autograd::any_requires_grad(a))
    record_unary("AbsBackward0", "abs_backward", a, out, a,
                 [](auto g, auto x) { return x > 0 ? g : (x < 0 ? -g : decltype(g)(0)); }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Abs});
  return out;
}

Tensor sign(const Tensor& a) {
  OpGuard guard("sign", a);
  if (a.dtype() == kBool) return clone(detach(a));
  Tensor out = detail::map_same(a, [](auto x) {
    using C = decltype(x);
    return C(int(C(0) < x) - int(x < C(0)));
  }, detail::DeviceUnary{dispatch::UnaryOp::Sign});
  if (autograd::any_requires_grad(a))
    record("SignBackward0", {a}, {out}, [](const TensorList& g) { return TensorList{zeros_like(g[0])}; });
  return out;
}

Tensor exp(const Tensor& a) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return exp(ac[0]);
  OpGuard guard("exp", a);
  Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) { return detail::vexp(x); }, detail::DeviceUnary{dispatch::UnaryOp::Exp});
  if (autograd::any_requires_grad(a))
    record_unary("ExpBackward0", "exp_backward", a, out, out, [](auto g, auto r) { return g * r; }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Exp});
  return out;
}

Tensor log(const Tensor& a) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return log(ac[0]);
  OpGuard guard("log", a);
  Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) { return detail::vlog(x); }, detail::DeviceUnary{dispatch::UnaryOp::Log});
  if (autograd::any_requires_grad(a))
    record_unary("LogBackward0", "log_backward", a, out, a, [](auto g, auto x) { return g / x; }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Log});
  return out;
}

Tensor log1p(const Tensor& a) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return log1p(ac[0]);
  OpGuard guard("log1p", a);
  Tensor out = map_float(a, [](auto x) { return std::log1p(x); }, detail::DeviceUnary{dispatch::UnaryOp::Log1p});
  if (autograd::any_requires_grad(a))
    record_unary("Log1PBackward0", "log1p_backward", a, out, a,
                 [](auto g, auto x) { return g / (x + decltype(x)(1)); }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Log1p});
  return out;
}

Tensor sqrt(const Tensor& a) {
  OpGuard guard("sqrt", a);
  Tensor out = map_float(a, [](auto x) { return std::sqrt(x); }, detail::DeviceUnary{dispatch::UnaryOp::Sqrt});
  if (autograd::any_requires_grad(a))
    record_unary("SqrtBackward0", "sqrt_backward", a, out, out,
                 [](auto g, auto r) { return g / (decltype(r)(2) * r); }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Sqrt});
  return out;
}

Tensor rsqrt(const Tensor& a) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return rsqrt(ac[0]);
  OpGuard guard("rsqrt", a);
  Tensor out = map_float(a, [](auto x) { return decltype(x)(1) / std::sqrt(x); }, detail::DeviceUnary{dispatch::UnaryOp::Rsqrt});
  if (autograd::any_requires_grad(a))
    record_unary("RsqrtBackward0", "rsqrt_backward", a, out, out,
                 [](auto g, auto r) { return decltype(r)(-0.5) * g * r * r * r; }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Rsqrt});
  return out;
}

Tensor reciprocal(const Tensor& a) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return reciprocal(ac[0]);
  OpGuard guard("reciprocal", a);
  Tensor out = map_float(a, [](auto x) { return decltype(x)(1) / x; }, detail::DeviceUnary{dispatch::UnaryOp::Reciprocal});
  if (autograd::any_requires_grad(a))
    record_unary("ReciprocalBackward0", "reciprocal_backward", a, out, out,
                 [](auto g, auto r) { return -g * r * r; }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Reciprocal});
  return out;
}

Tensor sin(const Tensor& a) {
  OpGuard guard("sin", a);
  Tensor out = map_float(a, [](auto x) { return std::sin(x); }, detail::DeviceUnary{dispatch::UnaryOp::Sin});
  if (autograd::any_requires_grad(a))
    record_unary("SinBackward0", "sin_backward", a, out, a, [](auto g, auto x) { return g * std::cos(x); }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Sin});
  return out;
}

Tensor cos(const Tensor& a) {
  OpGuard guard("cos", a);
  Tensor out = map_float(a, [](auto x) { return std::cos(x); }, detail::DeviceUnary{dispatch::UnaryOp::Cos});
  if (autograd::any_requires_grad(a))
    record_unary("CosBackward0", "cos_backward", a, out, a, [](auto g, auto x) { return -g * std::sin(x); }, detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Cos});
  return out;
}

Tensor tanh(const Tensor& a) {
  OpGuard guard("tanh", a);
  Tensor out = map_float(a, [](auto x) __attribute__((always_inline)) { return detail::vtanh(x); }, detail::DeviceUnary{dispatch::UnaryOp::Tanh});
  if (autograd::any_requires_grad(a)) detail::record_tanh_backward(a, out);
  return out;
}

void detail::record_tanh_backward(const Tensor& in, const Tensor& out) {
  record_unary("TanhBackward0", "tanh_backward", in, out, out,
               [](auto g, auto r) { return g * (decltype(r)(1) - r * r); },
               detail::DeviceUnaryBackward{dispatch::UnaryBackwardOp::Tanh});
}

}  // namespace rt
