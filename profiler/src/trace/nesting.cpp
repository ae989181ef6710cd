#include "trace/nesting.h"

#include <algorithm>

namespace rt::prof::trace {

uint64_t nest_strictly(std::vector<Slice>& slices) {
  for (auto& s : slices) s.end = std::max(s.end, s.start);
  std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.index < b.index;
  });
  uint64_t clamped = 0;
  std::vector<int64_t> open_ends;
  for (auto& s : slices) {
    while (!open_ends.empty() && open_ends.back() <= s.start)
      open_ends.pop_back();
    if (!open_ends.empty() && s.end > open_ends.back()) {
      s.end = open_ends.back();
      ++clamped;
    }
    s.depth = int32_t(open_ends.size());
    open_ends.push_back(s.end);
  }
  return clamped;
}

}  // namespace rt::prof::trace
