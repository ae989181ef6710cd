#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/timeline_lod.h"

namespace rt::viz {

namespace {

// The smallest integer time at or after anchor + min_ns. Durations are integers, so an event starting
// at or after the anchor and ending before it is narrower than min_ns. Integer arithmetic keeps
// epoch-sized times exact.
int64_t time_after(int64_t anchor, double min_ns) {
  const double step = std::max(1.0, std::ceil(min_ns));
  if (step >= double(INT64_MAX) - double(anchor)) return INT64_MAX;
  return anchor + int64_t(step);
}

// The first index in [from, last) whose end is >= target, or last. Galloping from `from` keeps the
// search near the previous item, which is where the next one usually is.
size_t first_end_at_or_after(const std::vector<int64_t>& ends, size_t from, size_t last, int64_t target) {
  if (from >= last || ends[from] >= target) return from;
  size_t lo = from;  // ends[lo] < target
  size_t step = 1;
  while (lo + step < last && ends[lo + step] < target) {
    lo += step;
    step *= 2;
  }
  const size_t hi = std::min(lo + step, last);
  return size_t(std::lower_bound(ends.begin() + ptrdiff_t(lo) + 1, ends.begin() + ptrdiff_t(hi), target) - ends.begin());
}

void check(const LodOptions& options) {
  if (!(options.min_px > 0) || !std::isfinite(options.min_px))
    throw ValueError(fmt::format("timeline level of detail: min_px must be > 0, got {}", options.min_px));
}

}  // namespace

size_t LevelFrame::event_count() const {
  size_t n = 0;
  for (const DrawItem& item : items) n += item.count;
  return n;
}

void fold_level(const TrackLevel& level, int64_t t0, int64_t t1, double min_ns, std::vector<DrawItem>& out) {
  const auto& starts = level.starts;
  const auto& ends = level.ends;
  size_t i = size_t(std::lower_bound(ends.begin(), ends.end(), t0) - ends.begin());
  const size_t last = size_t(std::upper_bound(starts.begin(), starts.end(), t1) - starts.begin());
  auto narrow = [&](size_t k) { return double(ends[k] - starts[k]) < min_ns; };

  while (i < last) {
    if (!narrow(i)) {
      out.push_back({starts[i], ends[i], uint32_t(i), 1});
      ++i;
      continue;
    }
    const size_t first = i;
    size_t end_index = i + 1;  // one past the last folded event
    for (;;) {
      // Every event ending before anchor + min_ns starts after the anchor, so it is narrow too.
      const int64_t target = time_after(ends[end_index - 1], min_ns);
      end_index = first_end_at_or_after(ends, end_index, last, target);
      if (end_index >= last || !narrow(end_index)) break;
      if (double(starts[end_index] - ends[end_index - 1]) >= min_ns) break;
      ++end_index;
    }
    out.push_back({starts[first], ends[end_index - 1], uint32_t(first), uint32_t(end_index - first)});
    i = end_index;
  }
}

void build_track_frame(const TimelineModel& model, uint32_t track, const TimelineView& view, TrackFrame& out,
                       const LodOptions& options) {
  check(options);
  if (track >= model.tracks().size())
    throw IndexError(fmt::format("build_track_frame: no track {} (the model has {})", track, model.tracks().size()));
  const Track& t = model.tracks()[track];
  out.track = track;
  out.counter.clear();
  const double min_ns = options.min_px * view.ns_per_px();
  size_t used = 0;
  for (uint32_t l = 0; l < t.levels.size(); ++l) {
    if (used == out.levels.size()) out.levels.emplace_back();
    LevelFrame& lf = out.levels[used];
    lf.level = l;
    lf.items.clear();
    fold_level(t.levels[l], view.t0(), view.t1(), min_ns, lf.items);
    if (!lf.items.empty()) ++used;
  }
  out.levels.resize(used);
  if (!t.counter_times.empty())
    downsample(t.counter_times, t.counter_values, view.t0(), view.t1(), view.width_px(), out.counter);
}

void build_frame(const TimelineModel& model, const TimelineView& view, TimelineFrame& out, const LodOptions& options) {
  check(options);
  out.t0 = view.t0();
  out.t1 = view.t1();
  out.width_px = view.width_px();
  out.tracks.resize(model.tracks().size());
  for (uint32_t t = 0; t < model.tracks().size(); ++t) build_track_frame(model, t, view, out.tracks[t], options);
}

}  // namespace rt::viz
