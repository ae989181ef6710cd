// rt/viz/timeline_lod.h — level of detail: what to draw of each track for the visible window,
// in O(pixels) per level however many events the session holds (Tracy's approach).
//
//   rt::viz::TimelineFrame frame;               // keep it across frames: its storage is reused
//   rt::viz::build_frame(model, view, frame);   // min_px = 3 by default
//   for (const rt::viz::TrackFrame& tf : frame.tracks)
//     for (const rt::viz::LevelFrame& lf : tf.levels)
//       for (const rt::viz::DrawItem& item : lf.items) {
//         float x0 = float(view.x_of(item.start_ns)), x1 = float(view.x_of(item.end_ns));
//         if (item.folded()) draw_block(x0, x1, lf.level, item.count);   // "1234 events"
//         else draw_event(x0, x1, lf.level, model.name({tf.track, lf.level, item.first}));
//       }
//
// Contracts
// - A level's window is its events with end >= t0 and start <= t1 (touching counts).
// - Items come in time order. An event at least min_px wide (min_ns = min_px * ns_per_px) is drawn
//   as itself (count 1). Consecutive narrower events whose gaps are each under min_ns fold into one
//   block (count >= 2) with the exact extent of its events: start of the first, end of the last; a
//   lone narrow event stays an item of its own (count 1; draw it at least one pixel wide).
// - Every event of the window is in exactly one item: the counts of a level's items add up to the
//   events in its window, and item `first .. first + count - 1` are the level's event indexes.
// - Counter tracks get per-pixel min/max columns of their samples (rt/viz/scalars.h) instead of levels.
// - Cost per level: two binary searches, then one binary search per item; at most about
//   width_px / min_px * 2 + 2 items per level whatever the zoom.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/viz/scalars.h"
#include "rt/viz/timeline.h"
#include "rt/viz/timeline_view.h"

namespace rt::viz {

struct LodOptions {
  double min_px = 3.0;  // narrower events fold; must be > 0
};

struct DrawItem {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t first = 0;  // index of the first event in the level
  uint32_t count = 1;
  bool folded() const { return count > 1; }
};

struct LevelFrame {
  uint32_t level = 0;
  std::vector<DrawItem> items;
  size_t event_count() const;  // events the items stand for
};

struct TrackFrame {
  uint32_t track = 0;
  std::vector<LevelFrame> levels;       // only levels with events in the window
  std::vector<ScalarColumn> counter;    // Counter tracks
};

struct TimelineFrame {
  int64_t t0 = 0;
  int64_t t1 = 0;
  double width_px = 0;
  std::vector<TrackFrame> tracks;       // one per model track, in model order
};

// Items of one level for [t0, t1] with events narrower than min_ns folded; appends to `out`.
void fold_level(const TrackLevel& level, int64_t t0, int64_t t1, double min_ns, std::vector<DrawItem>& out);

// One track (interval or counter) for the view's window; overwrites `out`.
void build_track_frame(const TimelineModel& model, uint32_t track, const TimelineView& view, TrackFrame& out,
                       const LodOptions& options = {});

// Every track; overwrites `out`, reusing its vectors. Throws rt::ValueError when min_px <= 0;
// build_track_frame throws rt::IndexError for a track the model does not have.
void build_frame(const TimelineModel& model, const TimelineView& view, TimelineFrame& out,
                 const LodOptions& options = {});

}  // namespace rt::viz
