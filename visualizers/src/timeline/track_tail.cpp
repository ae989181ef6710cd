#include "timeline/track_tail.h"

#include <algorithm>

#include "rt/prof/nesting.h"
#include "timeline/track_builder.h"

namespace rt::viz {

// Note [Re-nesting a tail]
// build_tracks sorts a track's slices with rt::prof::nests_before (start, end descending, rank, then the
// record's place: ops in record order before CUDA calls in record order) and steps through them with one
// stack of open slices (rt::prof::nest_next). A slice's level and clamped end depend only on the slices before
// it in that order. So when records arrive, every event that starts before the earliest new start t keeps its
// level and end, and only the tail, the events starting at or after t, has to be nested again, together with
// the new ones. Within a level events are sorted by start, so the tail is a suffix of each level.
// The stack at the cut is read off the levels: the open slices before the first tail slice are the last kept
// event of level 0 and, going down, the last kept event of each next level as long as it starts at or after
// the one above it (a deeper event that starts earlier belongs to an older parent, and so does every one below
// it). Those are the innermost kept event and its ancestors, with their clamped ends, exactly the stack
// nest_slices had there. The tail is then sorted and stepped through as nest_slices would, with tie-breaking
// indexes in the same (source, record) order. A late-arriving outer op (written when it ends, after its
// children were read) starts early, so it pulls its children into the tail and they move one level down.
// Repairs are recounted for the tail only: clamps by comparing an old event's end with its record's, negative
// lengths for new records only (they do not depend on order).

namespace {

int64_t start_of(const prof::SessionData& data, const TrackRecord& r) {
  return r.second == EventSource::Op ? data.ops[r.first].start_ns : data.gpu[r.first].start_ns;
}

prof::NestedSlice slice_of(const prof::SessionData& data, const TrackRecord& r, uint32_t index) {
  return r.second == EventSource::Op ? prof::slice_of(data.ops[r.first], index)
                                     : prof::slice_of(data.gpu[r.first], index);
}

bool record_order(const TrackRecord& a, const TrackRecord& b) {
  if (a.second != b.second) return a.second == EventSource::Op;
  return a.first < b.first;
}

}  // namespace

void renest_tail(Track& track, const prof::SessionData& data, std::span<const TrackRecord> added, size_t first_new_op,
                 size_t first_new_gpu, TailRepairs& repairs, std::vector<PlacedEvent>& placed) {
  if (added.empty()) return;
  int64_t cut = start_of(data, added.front());
  for (const TrackRecord& r : added) cut = std::min(cut, start_of(data, r));

  std::vector<TrackRecord> tail(added.begin(), added.end());
  for (TrackLevel& level : track.levels) {
    const auto from = size_t(std::lower_bound(level.starts.begin(), level.starts.end(), cut) - level.starts.begin());
    for (size_t i = from; i < level.size(); ++i) {
      const TrackRecord r{level.records[i], level.sources[i]};
      const prof::NestedSlice recorded = slice_of(data, r, 0);
      if (level.ends[i] != std::max(recorded.start, recorded.end)) ++repairs.clamped_before;
      tail.push_back(r);
    }
    level.starts.resize(from);
    level.ends.resize(from);
    level.records.resize(from);
    level.sources.resize(from);
  }
  while (!track.levels.empty() && track.levels.back().size() == 0) track.levels.pop_back();

  std::vector<prof::OpenSlice> open;  // Note [Re-nesting a tail]: the kept innermost event and its ancestors
  for (const TrackLevel& level : track.levels) {
    if (level.size() == 0 || (!open.empty() && level.starts.back() < track.levels[open.size() - 1].starts.back()))
      break;
    open.push_back({level.ends.back(), int32_t(open.size())});
  }

  std::sort(tail.begin(), tail.end(), record_order);
  std::vector<prof::NestedSlice> slices;
  slices.reserve(tail.size());
  for (uint32_t k = 0; k < tail.size(); ++k) {
    prof::NestedSlice s = slice_of(data, tail[k], k);
    if (s.end < s.start) {
      s.end = s.start;
      const bool is_new =
          tail[k].second == EventSource::Op ? tail[k].first >= first_new_op : tail[k].first >= first_new_gpu;
      if (is_new) ++repairs.end_before_start;
    }
    slices.push_back(s);
  }
  std::sort(slices.begin(), slices.end(),
            [](const prof::NestedSlice& a, const prof::NestedSlice& b) { return prof::nests_before(a, b); });
  for (prof::NestedSlice& s : slices) {
    if (prof::nest_next(s, /*position=*/0, open)) ++repairs.clamped_after;  // positions are not used here
    const auto depth = size_t(s.depth);
    if (track.levels.size() <= depth) track.levels.resize(depth + 1);
    TrackLevel& level = track.levels[depth];
    level.starts.push_back(s.start);
    level.ends.push_back(s.end);
    level.records.push_back(tail[s.index].first);
    level.sources.push_back(tail[s.index].second);
    placed.push_back({tail[s.index], uint32_t(depth), uint32_t(level.size() - 1)});
  }
  set_extent(track);
}

void merge_counter_samples(Track& track, const prof::SessionData& data, std::span<const uint32_t> added) {
  if (added.empty()) return;
  std::vector<uint32_t> more(added.begin(), added.end());
  std::stable_sort(more.begin(), more.end(),
                   [&](uint32_t a, uint32_t b) { return data.counters[a].time_ns < data.counters[b].time_ns; });
  auto& samples = track.counter_samples;
  auto& times = track.counter_times;
  auto& values = track.counter_values;
  // Equal times keep record order: every kept sample's record precedes the new ones.
  const int64_t first_new = data.counters[more.front()].time_ns;
  const auto from = size_t(std::upper_bound(times.begin(), times.end(), first_new) - times.begin());
  std::vector<uint32_t> merged;
  merged.reserve(samples.size() - from + more.size());
  size_t i = from, j = 0;
  while (i < samples.size() || j < more.size()) {
    const bool take_kept = j == more.size() || (i < samples.size() && times[i] <= data.counters[more[j]].time_ns);
    merged.push_back(take_kept ? samples[i++] : more[j++]);
  }
  samples.resize(from);
  times.resize(from);
  values.resize(from);
  for (uint32_t r : merged) {
    samples.push_back(r);
    times.push_back(data.counters[r].time_ns);
    values.push_back(data.counters[r].value);
  }
  track.first_ns = times.front();
  track.last_ns = times.back();
}

}  // namespace rt::viz
