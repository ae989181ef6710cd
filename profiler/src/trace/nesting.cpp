#include "rt/prof/nesting.h"

#include <algorithm>

namespace rt::prof {

namespace {

// CUDA runtime and driver calls sort after every op with the same interval: inside the op that made them.
constexpr int32_t kRuntimeCallRank = 1 << 30;

}  // namespace

NestingRepairs nest_slices(std::vector<NestedSlice>& slices) {
  NestingRepairs repairs;
  for (NestedSlice& s : slices) {
    if (s.end < s.start) {
      s.end = s.start;
      ++repairs.end_before_start;
    }
  }
  std::sort(slices.begin(), slices.end(),
            [](const NestedSlice& a, const NestedSlice& b) { return nests_before(a, b); });
  std::vector<OpenSlice> open;  // innermost last
  for (size_t i = 0; i < slices.size(); ++i) {
    NestedSlice& s = slices[i];
    if (nest_next(s, int32_t(i), open)) ++repairs.clamped;
    s.self_ns = s.end - s.start;
    if (s.parent >= 0) slices[size_t(s.parent)].self_ns -= s.end - s.start;
  }
  return repairs;
}

NestedSlice slice_of(const OpRecord& op, uint32_t index) {
  return {.start = op.start_ns, .end = op.end_ns, .index = index, .rank = op.depth};
}

NestedSlice slice_of(const GpuActivityRecord& activity, uint32_t index) {
  const bool call = activity.kind == GpuActivityKind::Runtime || activity.kind == GpuActivityKind::Driver;
  return {.start = activity.start_ns, .end = activity.end_ns, .index = index, .rank = call ? kRuntimeCallRank : 0};
}

NestedSlice slice_of(const StepRecord& step, uint32_t index) {
  return {.start = step.start_ns, .end = step.end_ns, .index = index};
}

}  // namespace rt::prof

namespace rt::prof {

std::vector<uint32_t> pack_collective_lanes(const std::vector<CollectiveRecord>& collectives) {
  std::vector<uint32_t> order(collectives.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return collectives[a].start_ns < collectives[b].start_ns;
  });
  std::vector<uint32_t> lane(collectives.size(), 0);
  std::vector<int64_t> lane_end;  // the last end in each lane
  for (uint32_t i : order) {
    const CollectiveRecord& c = collectives[i];
    const int64_t end = std::max(c.end_ns, c.start_ns);
    uint32_t l = 0;
    while (l < lane_end.size() && lane_end[l] > c.start_ns) ++l;
    if (l == lane_end.size()) lane_end.push_back(end);
    else lane_end[l] = end;
    lane[i] = l;
  }
  return lane;
}

}  // namespace rt::prof
