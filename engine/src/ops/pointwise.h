// Shared pieces of the pointwise ops (unary.cpp, activation.cpp, pow_clamp.cpp, compare.cpp):
// dtype visitors, the out-of-place unary driver, fused backward kernels, and float32 exp, log,
// tanh and erf written so that GCC vectorises the loops in kernels/cpu/loops.h (glibc's do not).
// Contiguous float32 operands of the ops with a per-level kernel (isa_unary) take that instead:
// SLEEF's math at the CPU's instruction-set level (kernels/cpu/isa/unary.cpp).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "cpu/isa_kernels.h"
#include "ops/cpu_view.h"
#include "ops/isa_loops.h"
#include "dispatch_stubs.h"
#include "inplace.h"
#include "op_device.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"

namespace rt::detail {

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<compute_t<T>>;

// Like visit_dtype, for the floating dtypes only (the caller has checked is_floating).
template <typename F>
decltype(auto) visit_float(ScalarType t, F&& f) {
  switch (t) {
    case kFloat16: return f.template operator()<Half>();
    case kBFloat16: return f.template operator()<BFloat16>();
    case kFloat64: return f.template operator()<double>();
    default: return f.template operator()<float>();
  }
}

// Floating-only functions return float32 for bool and integer inputs, as PyTorch does.
inline ScalarType float_result(ScalarType t) { return is_floating(t) ? t : kFloat32; }

// c ? a : b without a branch. Under GCC's default -ftrapping-math, ?: between two computed
// floating values (a product, a quotient) stays a branch and blocks vectorisation; this does not.
template <typename C>
[[gnu::always_inline]] inline C blend(bool c, C a, C b) {
  if constexpr (std::is_floating_point_v<C> || (std::is_integral_v<C> && sizeof(C) >= 4)) {
    using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
    const U m = U(0) - U(c);
    return std::bit_cast<C>((std::bit_cast<U>(a) & m) | (std::bit_cast<U>(b) & ~m));
  } else {
    return c ? a : b;
  }
}

// ---- float32 math that vectorises --------------------------------------------------------
// exp with Cephes' polynomial on [-ln2/2, ln2/2]; within 2 ulp of the correctly rounded value,
// exact at 0, inf/0 outside the float range, NaN in -> NaN out. No branches, so loops vectorise.
[[gnu::always_inline]] inline float exp_f32(float x) {
  const float xc = blend(x > 89.f, 89.f, blend(x < -104.f, -104.f, x));
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = xc * 1.44269504088896341f + kMagic;
  const float n = t - kMagic;
  const float r = xc - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * (r * r) + r + 1.f;
  // 2^n split in two factors so that n in [-150, 129] stays within normal exponents.
  const int32_t ni = int32_t(std::bit_cast<uint32_t>(t) - std::bit_cast<uint32_t>(kMagic));
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = std::bit_cast<float>(uint32_t(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(uint32_t(n2 + 127) << 23);
  return y * s1 * s2;
}

// tanh: Cephes' odd polynomial for |x| < 0.625, 1 - 2 / (exp(2|x|) + 1) beyond. Both sides are
// computed and one selected, so the loop has no branch to stop vectorisation; copysign keeps -0.
[[gnu::always_inline]] inline float tanh_f32(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * ax + ax;
  const float large = 1.f - 2.f / (exp_f32(2.f * ax) + 1.f);
  return std::copysign(blend(ax < 0.625f, small, large), x);
}

// log with Cephes' polynomial on the mantissa in [sqrt(1/2), sqrt(2)); within 1 ulp, subnormals
// included; -inf at 0, NaN below 0, inf and NaN pass through.
[[gnu::always_inline]] inline float log_f32(float x) {
  const bool tiny = x < 1.17549435e-38f;  // subnormal (or <= 0): scale into the normal range
  const uint32_t bits = std::bit_cast<uint32_t>(blend(tiny, x * 33554432.f, x));
  float e = float(int32_t(bits >> 23) - 126) - blend(tiny, 25.f, 0.f);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = e - blend(low, 1.f, 0.f);
  m = m - 1.f + blend(low, m, 0.f);
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  const float r = m + (p * m * z + e * -2.12194440e-4f - 0.5f * z) + e * 0.693359375f;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float special = blend(x == 0.f, -kInf, blend(x == kInf, kInf, std::numeric_limits<float>::quiet_NaN()));
  return blend((x > 0.f) & (x < kInf), r, special);
}

// erf within 3 ulp: x * P(x^2) for |x| < 1 and 1 - exp(Q(|x|) - x^2) beyond, with P and Q
// least-squares fits (relative error 1.4e-9 and absolute error 1.3e-8 in log erfc).
[[gnu::always_inline]] inline float erf_f32(float x) {
  const float a = std::fabs(x), s = x * x;
  float p = 7.898210124667817e-05f;
  p = p * s - 8.024354100643322e-04f;
  p = p * s + 5.190053574128705e-03f;
  p = p * s - 2.6854808534834983e-02f;
  p = p * s + 1.1283612428168437e-01f;
  p = p * s - 3.7612628843314244e-01f;
  p = p * s + 1.1283791665100473f;
  const float small = p * a;
  const float ac = blend(a > 4.f, 4.f, a);  // erf(x) rounds to 1 beyond 3.92
  const float t = ac - 2.5f;
  float q = 1.614061609919124e-06f;
  q = q * t - 1.330939038821854e-05f;
  q = q * t + 7.739442553496749e-05f;
  q = q * t - 4.2014456752722303e-04f;
  q = q * t + 2.1651603097293986e-03f;
  q = q * t - 1.0858517012642621e-02f;
  q = q * t + 5.610635972748159e-02f;
  q = q * t - 3.5268068107285533e-01f;
  q = q * t - 1.5568152770519286f;
  const float large = 1.f - exp_f32(q - ac * ac);
  return std::copysign(blend(a < 1.f, small, large), x);
}

// Inlined into every kernel loop: a call left in the loop stops vectorisation.
[[gnu::always_inline]] inline float vexp(float x) { return exp_f32(x); }
[[gnu::always_inline]] inline double vexp(double x) { return std::exp(x); }
[[gnu::always_inline]] inline float vtanh(float x) { return tanh_f32(x); }
[[gnu::always_inline]] inline double vtanh(double x) { return std::tanh(x); }
[[gnu::always_inline]] inline float vlog(float x) { return log_f32(x); }
[[gnu::always_inline]] inline double vlog(double x) { return std::log(x); }
[[gnu::always_inline]] inline float verf(float x) { return erf_f32(x); }
[[gnu::always_inline]] inline double verf(double x) { return std::erf(x); }
// 1 / (1 + exp(-x)), written as e / (1 + e) with e = exp(x) for x < 0 so that tiny results keep
// their relative precision instead of flushing to 0 once exp(-x) overflows.
template <typename C>
[[gnu::always_inline]] inline C vsigmoid(C x) {
  const C e = vexp(-std::fabs(x));
  const C s = C(1) / (C(1) + e);
  return blend(x < C(0), e * s, s);
}

// ---- drivers ------------------------------------------------------------------------------
// Note [Inlined kernel lambdas]
// Op lambdas that call exp_f32/log_f32/tanh_f32/erf_f32 are marked __attribute__((always_inline))
// (the [[gnu::]] spelling is ignored on lambdas): once those are inlined into them, GCC keeps
// such a lambda out of line, and a call per element stops the loops in kernels/cpu/loops.h from
// vectorising (gelu ran 4x slower). Small lambdas are inlined without help.

// What a pointwise op runs off the host: the `unary` stub (dispatch_stubs.h) with this op, whose
// CUDA kernel is kernels/cuda/unary.h. An op that passes none has no device kernel yet: on a GPU
// tensor its CPU loop refuses the device memory with a DeviceError.
struct DeviceUnary {
  dispatch::UnaryOp op;
  cuda_kernels::UnaryParams params{};
};

// Its fused backward off the host (the `unary_backward` stub, kernels/cuda/unary_backward.h), likewise optional.
struct DeviceUnaryBackward {
  dispatch::UnaryBackwardOp op;
  cuda_kernels::UnaryParams params{};
};

// The per-level CPU kernel (kernels/cpu/isa_kernels.h) of an op, for contiguous float32 operands.
// See Note [CPU capability dispatch] in kernels/cpu/isa_kernels.cpp.
inline std::optional<cpu::VecUnary> isa_unary(dispatch::UnaryOp op) {
  using U = dispatch::UnaryOp;
  switch (op) {
    case U::Exp: return cpu::VecUnary::Exp;
    case U::Log: return cpu::VecUnary::Log;
    case U::Tanh: return cpu::VecUnary::Tanh;
    case U::Sigmoid: return cpu::VecUnary::Sigmoid;
    case U::Relu: return cpu::VecUnary::Relu;
    case U::Gelu: return cpu::VecUnary::Gelu;
    case U::GeluTanh: return cpu::VecUnary::GeluTanh;
    case U::Silu: return cpu::VecUnary::Silu;
    default: return std::nullopt;
  }
}
inline std::optional<cpu::VecUnaryBackward> isa_unary_backward(dispatch::UnaryBackwardOp op) {
  using B = dispatch::UnaryBackwardOp;
  switch (op) {
    case B::Threshold: return cpu::VecUnaryBackward::Threshold;
    case B::Sigmoid: return cpu::VecUnaryBackward::Sigmoid;
    case B::Tanh: return cpu::VecUnaryBackward::Tanh;
    case B::Exp: return cpu::VecUnaryBackward::Exp;
    case B::Log: return cpu::VecUnaryBackward::Log;
    case B::Gelu: return cpu::VecUnaryBackward::Gelu;
    case B::GeluTanh: return cpu::VecUnaryBackward::GeluTanh;
    case B::Silu: return cpu::VecUnaryBackward::Silu;
    default: return std::nullopt;
  }
}

// out = op(a) through the per-level kernel when a is contiguous float32 and op has one; false otherwise.
inline bool try_isa_unary(const Tensor& out, const Tensor& a, const std::optional<DeviceUnary>& op) {
  if (!op || a.dtype() != kFloat32 || out.dtype() != kFloat32 || !a.is_contiguous() || !out.is_contiguous()) return false;
  const std::optional<cpu::VecUnary> v = isa_unary(op->op);
  if (!v) return false;
  const cpu::IsaKernels& k = cpu::isa_kernels();
  float* o = static_cast<float*>(out.raw_data());
  const float* x = static_cast<const float*>(a.raw_data());
  parallel_ranges(out.numel(), [&](int64_t b, int64_t e) { k.unary_f32(*v, o + b, x + b, e - b); });
  return true;
}

// out = op(a) for a floating-only function; op is generic over float and double.
template <typename Op>
Tensor map_float(const Tensor& a, Op op, std::optional<DeviceUnary> on_device = std::nullopt) {
  const ScalarType in = a.dtype();
  Tensor out = make_tensor(a.sizes(), float_result(in), a.device());
  if (!out.is_cpu() && on_device) {
    dispatch::unary(out.device(), on_device->op, out, a, on_device->params);
    return out;
  }
  if (try_isa_unary(out, a, on_device)) return out;
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  if (is_floating(in)) {
    visit_float(in, [&]<typename T>() { cpu::unary_kernel<T>(loop, op); });
  } else {
    visit_dtype(in, [&]<typename T>() {
      if constexpr (!is_float_v<T>)
        cpu::unary_kernel<T, float>(loop, [op](compute_t<T> x) { return op(float(x)); });
    });
  }
  return out;
}

// out = op(a) in a's dtype for every dtype but bool (the caller handles bool first).
template <typename Op>
Tensor map_same(const Tensor& a, Op op, std::optional<DeviceUnary> on_device = std::nullopt) {
  Tensor out = make_tensor(a.sizes(), a.dtype(), a.device());
  if (!out.is_cpu() && on_device) {
    dispatch::unary(out.device(), on_device->op, out, a, on_device->params);
    return out;
  }
  if (try_isa_unary(out, a, on_device)) return out;
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  visit_dtype(a.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) cpu::unary_kernel<T>(loop, op);
  });
  return out;
}

// A fused backward kernel: grad_in = op(grad, saved) in saved's (floating) dtype, shaped like
// grad. Reported to observers as `name` ("sigmoid_backward"), like PyTorch's backward ops.
template <typename Op>
Tensor map_grad(const char* name, const Tensor& grad, const Tensor& saved, Op op,
                std::optional<DeviceUnaryBackward> on_device = std::nullopt) {
  OpGuard guard(name, grad, saved);
  const ScalarType dt = saved.dtype();
  Tensor out = make_tensor(grad.sizes(), dt, op_device(name, grad, saved));
  if (!out.is_cpu() && on_device) {
    dispatch::unary_backward(out.device(), on_device->op, out, grad, saved, on_device->params);
    return out;
  }
  Tensor g = convert(grad, dt);
  const std::optional<cpu::VecUnaryBackward> v = on_device ? isa_unary_backward(on_device->op) : std::nullopt;
  if (v && dt == kFloat32 && g.sizes() == saved.sizes() && g.is_contiguous() && saved.is_contiguous()) {
    const cpu::IsaKernels& k = cpu::isa_kernels();
    float* o = static_cast<float*>(out.raw_data());
    const float* gp = static_cast<const float*>(g.raw_data());
    const float* sp = static_cast<const float*>(saved.raw_data());
    parallel_ranges(out.numel(), [&](int64_t b, int64_t e) { k.unary_backward_f32(*v, o + b, gp + b, sp + b, e - b); });
    return out;
  }
  cpu::ElementwiseLoop loop = cpu_loop(out, {g, saved});
  visit_float(dt, [&]<typename T>() { cpu::binary_kernel<T>(loop, op); });
  return out;
}

// Same with two saved tensors: grad_in = op(grad, s1, s2), computed in dtype `dt`.
template <typename Op>
Tensor map_grad3(const char* name, ScalarType dt, const Tensor& grad, const Tensor& s1, const Tensor& s2, Op op) {
  OpGuard guard(name, grad, s1, s2);
  Tensor g = convert(grad, dt), a = convert(s1, dt), b = convert(s2, dt);
  Tensor out = make_tensor(grad.sizes(), dt);
  cpu::ElementwiseLoop loop = cpu_loop(out, {g, a, b});
  visit_float(dt, [&]<typename T>() { cpu::ternary_kernel<T, T, T, T>(loop, op); });
  return out;
}

// Records node `name` for out = f(in), whose backward is map_grad(backward_op, grad, saved, op).
template <typename Op>
void record_unary(const char* name, const char* backward_op, const Tensor& in, const Tensor& out,
                  const Tensor& saved, Op op, std::optional<DeviceUnaryBackward> on_device = std::nullopt) {
  autograd::record(name, {in}, {out}, [s = autograd::SavedTensor(saved), backward_op, op, on_device](const TensorList& g) {
    return TensorList{map_grad(backward_op, g[0], s.unpack(), op, on_device)};
  });
}

}  // namespace rt::detail
