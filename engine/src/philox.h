// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11), the
// counter-based generator behind rt::Generator. Header-only so fill loops inline it.
#pragma once
#include <array>
#include <cstdint>

namespace rt::detail {

using PhiloxBlock = std::array<uint32_t, 4>;

inline PhiloxBlock philox4x32_10(PhiloxBlock ctr, std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    key[0] += kW0;
    key[1] += kW1;
  }
  return ctr;
}

// The block for a 64-bit counter under a 64-bit key (the seed): counter and key fill the low words.
inline PhiloxBlock philox_block(uint64_t counter, uint64_t key) {
  return philox4x32_10({uint32_t(counter), uint32_t(counter >> 32), 0u, 0u}, {uint32_t(key), uint32_t(key >> 32)});
}

}  // namespace rt::detail
