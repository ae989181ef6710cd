// Float32 uniforms from Philox4x32-10 (engine/src/philox.h's generator, kWidth counters at once) and
// dropout's mask-and-scale, forward and backward, at this file's level (vec.h).
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {
using VU = uint32_t __attribute__((vector_size(kWidth * 4)));
using VB = uint8_t __attribute__((vector_size(kWidth)));

using VQ = uint64_t __attribute__((vector_size(kWidth * 4)));  // the same register as kWidth / 2 words of 64 bits

// The 64-bit products of the low 32 bits of each lane of a and m (pmuludq; GCC would pick AVX-512's slow vpmullq).
RT_VEC_INLINE VQ mul_even(VQ a, uint32_t m) {
#if defined(__AVX512F__)
  return (VQ)_mm512_maskz_mul_epu32(0xff, (__m512i)a, _mm512_set1_epi64(m));  // GCC 12 warns on the unmasked form
#elif defined(__AVX2__)
  return (VQ)_mm256_mul_epu32((__m256i)a, _mm256_set1_epi64x(m));
#else
  return (VQ)_mm_mul_epu32((__m128i)a, _mm_set1_epi64x(m));
#endif
}

// hi and lo words of a * m for every 32-bit lane of a.
RT_VEC_INLINE void mul_hi_lo(VU a, uint32_t m, VU& hi, VU& lo) {
  const VQ even = mul_even((VQ)a, m), odd = mul_even((VQ)a >> 32, m);
  lo = (VU)((even & 0xffffffffu) | (odd << 32));
  hi = (VU)((even >> 32) | (odd & 0xffffffff00000000u));
}
}  // namespace

void philox_uniform_f32(float* out, int64_t n, uint64_t counter, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  constexpr int64_t kPerCall = 4 * kWidth;  // 4 values per counter
  uint32_t lane[kWidth];
  for (int i = 0; i < kWidth; ++i) lane[i] = uint32_t(i);
  VU iota;
  __builtin_memcpy(&iota, lane, sizeof iota);
  for (int64_t base = 0; base < n; base += kPerCall) {
    const uint64_t c = counter + uint64_t(base / 4);
    // Lane l: counter c + l, whose low word may wrap into the high word.
    const VU lo_words = iota + uint32_t(c);
    VU c0 = lo_words, c1 = (VU{} + uint32_t(c >> 32)) + ((VU)(lo_words < uint32_t(c)) & 1u), c2 = VU{}, c3 = VU{};
    uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
    for (int round = 0; round < 10; ++round) {
      VU h0, l0, h1, l1;
      mul_hi_lo(c0, kM0, h0, l0);
      mul_hi_lo(c2, kM1, h1, l1);
      c0 = h1 ^ c1 ^ k0;
      c1 = l1;
      c2 = h0 ^ c3 ^ k1;
      c3 = l0;
      k0 += kW0;
      k1 += kW1;
    }
    // Value k of counter l is element 4 l + k: (word >> 8) * 2^-24, uniform_at<float> of random.cpp.
    const VF scale = splat(0x1p-24f);
    float w[4][kWidth];
    store(w[0], __builtin_convertvector(c0 >> 8, VF) * scale);
    store(w[1], __builtin_convertvector(c1 >> 8, VF) * scale);
    store(w[2], __builtin_convertvector(c2 >> 8, VF) * scale);
    store(w[3], __builtin_convertvector(c3 >> 8, VF) * scale);
    const int64_t count = n - base < kPerCall ? n - base : kPerCall;
    for (int64_t i = 0; i < count; ++i) out[base + i] = w[i % 4][i / 4];
  }
}

void dropout_f32(float* out, uint8_t* mask, const float* x, const float* u, int64_t n, float keep, float scale) {
  for_vectors(n, [&](int64_t i, int64_t rem) {
    const VI k = load_n(u + i, rem, 1.f) < keep;
    store_n(out + i, load_n(x + i, rem) * select(k, splat(scale), splat(0.f)), rem);  // x * 0: NaN stays NaN
    const VB m = __builtin_convertvector(k & 1, VB);
    if (rem == kWidth) __builtin_memcpy(mask + i, &m, sizeof m);  // a constant size: one store
    else __builtin_memcpy(mask + i, &m, size_t(rem));
  });
}

void dropout_backward_f32(float* gx, const float* g, const uint8_t* mask, int64_t n, float scale) {
  for_vectors(n, [&](int64_t i, int64_t rem) {
    VB m = {};
    if (rem == kWidth) __builtin_memcpy(&m, mask + i, sizeof m);
    else __builtin_memcpy(&m, mask + i, size_t(rem));
    const VI k = __builtin_convertvector(m, VI) != 0;
    store_n(gx + i, load_n(g + i, rem) * select(k, splat(scale), splat(0.f)), rem);
  });
}

}  // namespace rt::cpu::RT_CPU_ISA
