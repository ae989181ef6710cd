// Float32 activations and math functions, and their backwards, at this file's level (vec.h).
// The formulas are engine/src/ops/activation.cpp's and unary.cpp's, on vectors.
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {
constexpr float kSqrt1_2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
constexpr float kSqrt2_Pi = 0.79788456080286535588f;
constexpr float kGeluKappa = 0.044715f;
constexpr float kGelu3Kappa = float(3 * 0.044715);

RT_VEC_INLINE VF gelu_tanh_inner(VF x, VF x2) { return vtanh(kSqrt2_Pi * (x + kGeluKappa * x2 * x)); }
}  // namespace

void unary_f32(VecUnary op, float* y, const float* x, int64_t n) {
  switch (op) {
    case VecUnary::Exp: return map_f32(y, x, n, [](VF v) { return vexp(v); });
    case VecUnary::Log: return map_f32(y, x, n, [](VF v) { return vlog(v); });
    case VecUnary::Tanh: return map_f32(y, x, n, [](VF v) { return vtanh(v); });
    case VecUnary::Sigmoid: return map_f32(y, x, n, [](VF v) { return vsigmoid(v); });
    case VecUnary::Relu: return map_f32(y, x, n, [](VF v) { return select(v < 0.f, splat(0.f), v); });
    case VecUnary::Gelu:
      return map_f32(y, x, n, [](VF v) { return 0.5f * v * (1.f + verf(v * kSqrt1_2)); });
    case VecUnary::GeluTanh:
      return map_f32(y, x, n, [](VF v) { return 0.5f * v * (1.f + gelu_tanh_inner(v, v * v)); });
    case VecUnary::Silu: return map_f32(y, x, n, [](VF v) { return v * vsigmoid(v); });
  }
}

void unary_backward_f32(VecUnaryBackward op, float* gi, const float* go, const float* saved, int64_t n) {
  switch (op) {
    case VecUnaryBackward::Threshold:
      return map2_f32(gi, go, saved, n, [](VF g, VF r) { return select(r > 0.f, g, splat(0.f)); });
    case VecUnaryBackward::Sigmoid:
      return map2_f32(gi, go, saved, n, [](VF g, VF s) { return g * s * (1.f - s); });
    case VecUnaryBackward::Tanh:
      return map2_f32(gi, go, saved, n, [](VF g, VF r) { return g * (1.f - r * r); });
    case VecUnaryBackward::Exp: return map2_f32(gi, go, saved, n, [](VF g, VF r) { return g * r; });
    case VecUnaryBackward::Log: return map2_f32(gi, go, saved, n, [](VF g, VF x) { return g / x; });
    case VecUnaryBackward::Gelu:
      return map2_f32(gi, go, saved, n, [](VF g, VF x) {
        const VF cdf = 0.5f * (1.f + verf(x * kSqrt1_2));
        const VF pdf = vexp(-0.5f * x * x) * kInvSqrt2Pi;
        return g * (cdf + x * pdf);
      });
    case VecUnaryBackward::GeluTanh:
      return map2_f32(gi, go, saved, n, [](VF g, VF x) {
        const VF x2 = x * x;
        const VF t = gelu_tanh_inner(x, x2);
        const VF left = 0.5f * (1.f + t);
        const VF right = 0.5f * x * (1.f - t * t) * kSqrt2_Pi * (1.f + kGelu3Kappa * x2);
        return g * (left + right);
      });
    case VecUnaryBackward::Silu:
      return map2_f32(gi, go, saved, n, [](VF g, VF x) {
        const VF s = vsigmoid(x);
        return g * s * (1.f + x * (1.f - s));
      });
  }
}

}  // namespace rt::cpu::RT_CPU_ISA
