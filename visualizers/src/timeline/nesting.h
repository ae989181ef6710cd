// Internal: splits one track's intervals into non-overlapping levels by time (see rt/viz/timeline.h).
#pragma once
#include <cstdint>
#include <vector>

#include "rt/viz/timeline.h"

namespace rt::viz {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t record = 0;
  EventSource source = EventSource::Op;
};

struct NestingRepairs {
  size_t end_before_start = 0;
  size_t overlaps = 0;
};

// Sorts by (start, longest first), repairs end < start and partial overlaps, and returns the levels.
std::vector<TrackLevel> nest_into_levels(std::vector<Interval> events, NestingRepairs& repairs);

}  // namespace rt::viz
