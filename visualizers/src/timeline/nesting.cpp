#include "timeline/nesting.h"

#include <algorithm>

namespace rt::viz {

namespace {

// A positive-width event starting where the open one ends is its sibling; a zero-width one there
// is its child.
bool ended_before(int64_t open_end, const Interval& e) {
  return open_end < e.start || (open_end == e.start && e.end > e.start);
}

}  // namespace

std::vector<TrackLevel> nest_into_levels(std::vector<Interval> events, NestingRepairs& repairs) {
  for (Interval& e : events) {
    if (e.end < e.start) {
      e.end = e.start;
      ++repairs.end_before_start;
    }
  }
  std::sort(events.begin(), events.end(), [](const Interval& a, const Interval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    if (a.source != b.source) return a.source < b.source;
    return a.record < b.record;
  });

  std::vector<TrackLevel> levels;
  std::vector<int64_t> open_ends;
  for (Interval& e : events) {
    while (!open_ends.empty() && ended_before(open_ends.back(), e)) open_ends.pop_back();
    if (!open_ends.empty() && e.end > open_ends.back()) {
      e.end = open_ends.back();
      ++repairs.overlaps;
    }
    const size_t depth = open_ends.size();
    if (levels.size() <= depth) levels.resize(depth + 1);
    TrackLevel& level = levels[depth];
    level.starts.push_back(e.start);
    level.ends.push_back(e.end);
    level.records.push_back(e.record);
    level.sources.push_back(e.source);
    open_ends.push_back(e.end);
  }
  return levels;
}

}  // namespace rt::viz
