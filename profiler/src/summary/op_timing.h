// Per-op timing derived from the intervals: direct parent, clamped end, self time and device time.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/prof/events.h"

namespace rt::prof {

struct OpTiming {
  int64_t end_ns = 0;   // the op's end clamped into its parent (Note [Nesting clamp] in rt/prof/nesting.h)
  int64_t self_ns = 0;  // end_ns - start_ns minus the clamped durations of the direct children
  int64_t self_device_ns = 0;
  int64_t device_total_ns = 0;
  int64_t self_memory[2] = {0, 0};   // [0] CPU, [1] devices: bytes allocated - freed while innermost
  int64_t total_memory[2] = {0, 0};  // the same, including descendants
  int64_t parent = -1;  // index into SessionData::ops of the direct parent on the same thread
};

// One entry per data.ops element, same order. See the contracts in rt/prof/summary.h.
std::vector<OpTiming> op_timings(const SessionData& data);

}  // namespace rt::prof
