// Per-op timing derived from the intervals: direct parent, self time and device time.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/prof/events.h"

namespace rt::prof {

struct OpTiming {
  int64_t self_ns = 0;
  int64_t self_device_ns = 0;
  int64_t device_total_ns = 0;
  int64_t parent = -1;  // index into SessionData::ops of the direct parent on the same thread
};

// One entry per data.ops element, same order. See the contracts in rt/prof/summary.h.
std::vector<OpTiming> op_timings(const SessionData& data);

}  // namespace rt::prof
