// kernels/cuda/philox.cuh — Philox4x32-10 on the device, bit-identical to engine/src/philox.h,
// and the uniform/normal derivations of engine/src/ops/random.cpp (Note [Random streams]).
// Private to kernels/cuda/*.cu.
//
//   const Philox4 w = philox_block(offset + i / 4, seed);   // the four words counter offset + i/4 gives
//   const float u = uniform_from_bits(w.v[i % 4], 24);      // element i's float32 uniform in [0, 1)
#pragma once
#include <cstdint>

namespace rt::cuda_kernels {

struct Philox4 {
  uint32_t v[4];
};

__device__ __forceinline__ Philox4 philox_block(uint64_t counter, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0u, c3 = 0u;
  uint32_t k0 = uint32_t(key), k1 = uint32_t(key >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kM0, c0), lo0 = kM0 * c0;
    const uint32_t hi1 = __umulhi(kM1, c2), lo1 = kM1 * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += kW0;
    k1 += kW1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

// 64-bit value k (0 or 1) of a block: words 2k (high) and 2k + 1 (low), as random.cpp's word64.
__device__ __forceinline__ uint64_t philox_word64(const Philox4& w, int k) {
  return (uint64_t(w.v[2 * k]) << 32) | w.v[2 * k + 1];
}

// A uniform in [0, 1) with `digits` mantissa bits (11 half, 8 bfloat16, 24 float, 53 double):
// random.cpp's uniform_at, exact in double.
__device__ __forceinline__ double uniform_at(const Philox4& w, int k, int digits) {
  if (digits > 32) return double(philox_word64(w, k) >> (64 - digits)) * (1.0 / double(uint64_t(1) << digits));
  return double(w.v[k] >> (32 - digits)) * (1.0 / double(uint64_t(1) << digits));
}

}  // namespace rt::cuda_kernels
