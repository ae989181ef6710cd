// gelu_math.h — GELU with the exact erf (torch's default, approximate="none") and its derivative, for one
// element, shared by the CPU loops and the CUDA kernels.
//
//   gelu(x)  = x * Phi(x),            Phi(x) = (1 + erf(x / sqrt(2))) / 2
//   gelu'(x) = Phi(x) + x * phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//
// float64 uses the C library's erfc and exp. float32 on the CPU uses fbg_erfc / fbg_exp below: branch-free
// (GCC vectorises the loops that call them; glibc's erff and expf it does not), relative error below 3e-7.
// Phi is computed from erfc(|x| / sqrt(2)) on both sides of 0, so gelu keeps its relative accuracy for negative x,
// where 1 + erf(...) would cancel.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(RT_CUDA_EMULATION)
#define FBG_HD __host__ __device__
#else
#define FBG_HD
#endif

namespace fbg {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// Branch-free pieces: GCC 12 leaves a float `c ? a : b` as a branch in these loops (so nothing vectorises);
// a bit mask does the same without one.
FBG_HD inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
FBG_HD inline float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
FBG_HD inline float select(bool c, float a, float b) {
  const uint32_t m = 0u - uint32_t(c);
  return bits_float((float_bits(a) & m) | (float_bits(b) & ~m));
}

// exp(x) for x <= 0 in float: x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor series to r^7 / 5040
// (relative error below 2e-8 there), 2^n built in the exponent bits. Below -87, 0.
FBG_HD inline float fbg_exp_nonpositive(float x) {
  const float xc = select(x < -87.f, -87.f, x);
  constexpr float kRound = 12582912.f;  // 1.5 * 2^23: adding and subtracting it rounds to the nearest integer
  const float n = (xc * 1.44269504088896341f + kRound) - kRound;
  const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;  // ln2 split in two (Cody and Waite)
  float p = 1.f / 5040.f;
  p = p * r + 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  const float scale = bits_float(uint32_t(int32_t(n) + 127) << 23);
  return select(x < -87.f, 0.f, p * scale);
}

// erfc(z) for z >= 0 in float: the Chebyshev fit of Numerical Recipes' erfcc (fractional error below 1.2e-7),
// t = 1 / (1 + z / 2), erfc = t exp(-z^2 + P(t)).
FBG_HD inline float fbg_erfc_nonnegative(float z) {
  const float t = 1.f / (1.f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * fbg_exp_nonpositive(-z * z + p);
}

// Phi(x) and phi(x) (see above), in float with the branch-free functions, or in double with the C library's.
FBG_HD inline float cdf_f32(float x) {
  const float e = fbg_erfc_nonnegative(::fabsf(x) * float(kInvSqrt2));
  return select(x >= 0.f, 1.f - 0.5f * e, 0.5f * e);
}
FBG_HD inline float pdf_f32(float x) { return float(kInvSqrt2Pi) * fbg_exp_nonpositive(-0.5f * x * x); }
FBG_HD inline double cdf_f64(double x) { return 0.5 * ::erfc(-x * kInvSqrt2); }
FBG_HD inline double pdf_f64(double x) { return kInvSqrt2Pi * ::exp(-0.5 * x * x); }

FBG_HD inline float gelu(float x) { return x * cdf_f32(x); }
FBG_HD inline double gelu(double x) { return x * cdf_f64(x); }
FBG_HD inline float gelu_grad(float x) { return cdf_f32(x) + x * pdf_f32(x); }
FBG_HD inline double gelu_grad(double x) { return cdf_f64(x) + x * pdf_f64(x); }

}  // namespace fbg
