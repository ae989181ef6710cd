// rt/generator.h — counter-based random numbers (Philox4x32-10), reproducible by seed.
//
//   rt::manual_seed(42);
//   auto a = rt::rand({3});
//   rt::manual_seed(42);
//   auto b = rt::rand({3});     // equal to a, whatever the thread count
//
// Each call reserves a block of counters (offset) from the generator, so results depend only
// on the seed and the sequence of calls, never on how the work is split across threads.
#pragma once
#include <cstdint>
#include <mutex>

#include "rt/export.h"

RT_API_BEGIN

namespace rt {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull) : seed_(seed) {}
  void manual_seed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  // Reserves `n` 128-bit counters; returns the first. Thread-safe.
  uint64_t reserve(uint64_t n);
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t o) { offset_ = o; }

 private:
  std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

Generator& default_generator();
void manual_seed(uint64_t seed);

// Philox4x32-10: four 32-bit random words for (counter, key).
void philox4x32(uint64_t counter, uint64_t key, uint32_t out[4]);

}  // namespace rt

RT_API_END
