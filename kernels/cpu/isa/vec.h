// kernels/cpu/isa/vec.h — the vector type and math of one instruction-set level, for the sources
// of kernels/cpu/isa/ only (each compiled three times, engine/CMakeLists.txt).
//
//   namespace rt::cpu::RT_CPU_ISA {                  // isa_default, isa_avx2 or isa_avx512
//   void twice_exp(float* y, const float* x, int64_t n) {
//     map_f32(y, x, n, [](VF v) { return vexp(v) * 2.f; });   // kWidth lanes at a time, tail padded
//   }
//   }
//
// Everything here lives in the level's own namespace, so an inline function the compiler keeps
// out of line is a different symbol at each level and the linker can never hand an AVX-512 copy to
// a caller of the default one. Headers with inline code outside that namespace (the C++ library's
// <cmath>, <algorithm>, <vector>, the engine's) stay out of these sources: tests/architecture/
// check_isa_symbols.py fails the build's tests when an object exports anything else.
// See Note [CPU capability dispatch] in kernels/cpu/isa_kernels.cpp.
#pragma once
#ifndef RT_CPU_ISA
#error "kernels/cpu/isa/ sources compile once per level with -DRT_CPU_ISA=isa_default|isa_avx2|isa_avx512"
#endif
#include <sleef.h>
#include <stdint.h>

namespace rt::cpu::RT_CPU_ISA {

#if defined(__AVX512F__)
inline constexpr int kWidth = 16;  // float32 lanes
#elif defined(__AVX2__)
inline constexpr int kWidth = 8;
#else
inline constexpr int kWidth = 4;
#endif

using VF = float __attribute__((vector_size(kWidth * 4)));
using VI = int32_t __attribute__((vector_size(kWidth * 4)));

#define RT_VEC_INLINE [[gnu::always_inline]] inline

RT_VEC_INLINE VF splat(float x) { return VF{} + x; }
RT_VEC_INLINE VF load(const float* p) {
  VF v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
RT_VEC_INLINE void store(float* p, VF v) { __builtin_memcpy(p, &v, sizeof v); }
// c ? a : b per lane (c from a comparison: all ones or zero).
RT_VEC_INLINE VF select(VI c, VF a, VF b) { return c ? a : b; }
RT_VEC_INLINE VF vabs(VF x) { return (VF)((VI)x & 0x7fffffff); }
RT_VEC_INLINE VF copysign(VF magnitude, VF sign) {
  return (VF)(((VI)magnitude & 0x7fffffff) | ((VI)sign & int32_t(0x80000000u)));
}

// The first `rem` lanes true (rem in [0, kWidth]).
RT_VEC_INLINE VI lanes_below(int64_t rem) {
  int32_t idx[kWidth];
  for (int i = 0; i < kWidth; ++i) idx[i] = i;
  VI v;
  __builtin_memcpy(&v, idx, sizeof v);
  return v < int32_t(rem);
}
// The first `rem` elements of p, the other lanes `fill` (reads only p[0, rem)).
RT_VEC_INLINE VF load_tail(const float* p, int64_t rem, float fill) {
  float buf[kWidth];
  for (int i = 0; i < kWidth; ++i) buf[i] = fill;
  __builtin_memcpy(buf, p, size_t(rem) * 4);
  return load(buf);
}
// Writes the first `rem` lanes of v to p.
RT_VEC_INLINE void store_tail(float* p, VF v, int64_t rem) {
  float buf[kWidth];
  store(buf, v);
  __builtin_memcpy(p, buf, size_t(rem) * 4);
}
RT_VEC_INLINE VF vmax(VF a, VF b) { return select(a > b, a, b); }  // b where either is NaN
// The lanes combined as a balanced tree, halves first: the same order at every width.
RT_VEC_INLINE float hsum(VF v) {
  float a[kWidth];
  store(a, v);
  for (int w = kWidth / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] += a[i + w];
  return a[0];
}
RT_VEC_INLINE float hmax(VF v) {
  float a[kWidth];
  store(a, v);
  for (int w = kWidth / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] = a[i] > a[i + w] ? a[i] : a[i + w];
  return a[0];
}

// exp and log: SLEEF's 1.0-ulp functions at this level's width (SSE4.1 for the x86-64-v2 default).
#if defined(__AVX512F__)
RT_VEC_INLINE VF vexp(VF x) { return (VF)Sleef_expf16_u10avx512f((__m512)x); }
RT_VEC_INLINE VF vlog(VF x) { return (VF)Sleef_logf16_u10avx512f((__m512)x); }
#elif defined(__AVX2__)
RT_VEC_INLINE VF vexp(VF x) { return (VF)Sleef_expf8_u10avx2((__m256)x); }
RT_VEC_INLINE VF vlog(VF x) { return (VF)Sleef_logf8_u10avx2((__m256)x); }
#else
RT_VEC_INLINE VF vexp(VF x) { return (VF)Sleef_expf4_u10sse4((__m128)x); }
RT_VEC_INLINE VF vlog(VF x) { return (VF)Sleef_logf4_u10sse4((__m128)x); }
#endif

// tanh and erf: engine/src/ops/pointwise.h's polynomials (tanh_f32, erf_f32) on vectors, over SLEEF's
// exp: as accurate as SLEEF's tanhf/erff for float32 (tests/engine/test_isa_kernels.cpp) and 2-6x faster.
// tanh: Cephes' odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above; the sign restored (-0 kept).
RT_VEC_INLINE VF vtanh(VF x) {
  const VF ax = vabs(x), z = x * x;
  VF p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const VF small = p * z * ax + ax;
  const VF large = 1.f - 2.f / (vexp(2.f * ax) + 1.f);
  return copysign(select(ax < 0.625f, small, large), x);
}

// erf: x * P(x^2) below 1, 1 - exp(Q(|x|) - x^2) above (least-squares fits), the sign restored.
RT_VEC_INLINE VF verf(VF x) {
  const VF a = vabs(x), s = x * x;
  VF p = splat(7.898210124667817e-05f);
  p = p * s - 8.024354100643322e-04f;
  p = p * s + 5.190053574128705e-03f;
  p = p * s - 2.6854808534834983e-02f;
  p = p * s + 1.1283612428168437e-01f;
  p = p * s - 3.7612628843314244e-01f;
  p = p * s + 1.1283791665100473f;
  const VF small = p * a;
  const VF ac = select(a > 4.f, splat(4.f), a);  // erf rounds to 1 beyond 3.92
  const VF t = ac - 2.5f;
  VF q = splat(1.614061609919124e-06f);
  q = q * t - 1.330939038821854e-05f;
  q = q * t + 7.739442553496749e-05f;
  q = q * t - 4.2014456752722303e-04f;
  q = q * t + 2.1651603097293986e-03f;
  q = q * t - 1.0858517012642621e-02f;
  q = q * t + 5.610635972748159e-02f;
  q = q * t - 3.5268068107285533e-01f;
  q = q * t - 1.5568152770519286f;
  const VF large = 1.f - vexp(q - ac * ac);
  return copysign(select(a < 1.f, small, large), x);
}

// 1 / (1 + exp(-x)), as e / (1 + e) with e = exp(x) below 0 so tiny results keep their precision.
RT_VEC_INLINE VF vsigmoid(VF x) {
  const VF e = vexp(-vabs(x));
  const VF s = 1.f / (1.f + e);
  return select(x < 0.f, e * s, s);
}

// y[i] = f(x[i]) for n elements, kWidth at a time; the tail goes through a padded vector.
template <typename F>
RT_VEC_INLINE void map_f32(float* y, const float* x, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store(y + i, f(load(x + i)));
  if (i < n) {
    float buf[kWidth] = {};
    __builtin_memcpy(buf, x + i, size_t(n - i) * 4);
    store(buf, f(load(buf)));
    __builtin_memcpy(y + i, buf, size_t(n - i) * 4);
  }
}

// z[i] = f(x[i], y[i]) likewise.
template <typename F>
RT_VEC_INLINE void map2_f32(float* z, const float* x, const float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store(z + i, f(load(x + i), load(y + i)));
  if (i < n) {
    float bx[kWidth] = {}, by[kWidth] = {};
    __builtin_memcpy(bx, x + i, size_t(n - i) * 4);
    __builtin_memcpy(by, y + i, size_t(n - i) * 4);
    store(bx, f(load(bx), load(by)));
    __builtin_memcpy(z + i, bx, size_t(n - i) * 4);
  }
}

// ---- rows ---------------------------------------------------------------------------------
inline constexpr float kNegInf = -__builtin_inff();

// The largest of x[0, n) (-inf for n == 0). NaN is skipped here; callers let it reach their sums.
RT_VEC_INLINE float row_max(const float* x, int64_t n) {
  VF m0 = splat(kNegInf), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * kWidth <= n; i += 2 * kWidth) m0 = vmax(load(x + i), m0), m1 = vmax(load(x + i + kWidth), m1);
  for (; i + kWidth <= n; i += kWidth) m0 = vmax(load(x + i), m0);
  if (i < n) m1 = vmax(load_tail(x + i, n - i, kNegInf), m1);
  return hmax(vmax(m0, m1));
}

// Sum over i in [0, n) of term(i, rem), which gives the terms of elements [i, i + rem) in its first
// rem lanes (rem == kWidth but at the tail) and 0 in the others: float lanes over 1024-element chunks,
// the chunk sums added in double (engine/src/ops/softmax.cpp's row_sum, vectorised).
inline constexpr int64_t kRowSumChunk = 1024;
template <typename Term>
RT_VEC_INLINE double row_sum(int64_t n, Term term) {
  double total = 0;
  for (int64_t c = 0; c < n; c += kRowSumChunk) {
    const int64_t end = c + kRowSumChunk < n ? c + kRowSumChunk : n;
    VF s0 = splat(0.f), s1 = s0;
    int64_t i = c;
    for (; i + 2 * kWidth <= end; i += 2 * kWidth)
      s0 += term(i, int64_t(kWidth)), s1 += term(i + kWidth, int64_t(kWidth));
    for (; i + kWidth <= end; i += kWidth) s0 += term(i, int64_t(kWidth));
    if (i < end) s1 += term(i, end - i);
    total += double(hsum(s0 + s1));
  }
  return total;
}

// f(i, rem) over [0, n) in vectors, rem < kWidth only for the last one.
template <typename F>
RT_VEC_INLINE void for_vectors(int64_t n, F f) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) f(i, int64_t(kWidth));
  if (i < n) f(i, n - i);
}
// Loads / stores rem lanes (all of them when rem == kWidth).
RT_VEC_INLINE VF load_n(const float* p, int64_t rem, float fill = 0.f) {
  return rem == kWidth ? load(p) : load_tail(p, rem, fill);
}
RT_VEC_INLINE void store_n(float* p, VF v, int64_t rem) {
  if (rem == kWidth) store(p, v);
  else store_tail(p, v, rem);
}

}  // namespace rt::cpu::RT_CPU_ISA
