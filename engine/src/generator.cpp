#include "rt/generator.h"

#include "philox.h"

namespace rt {

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t first = offset_;
  offset_ += n;
  return first;
}

Generator& default_generator() {
  static Generator g;
  return g;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

void philox4x32(uint64_t counter, uint64_t key, uint32_t out[4]) {
  const auto block = detail::philox_block(counter, key);
  for (int i = 0; i < 4; ++i) out[i] = block[size_t(i)];
}

}  // namespace rt
