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
