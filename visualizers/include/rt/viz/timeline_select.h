// rt/viz/timeline_select.h — what the user points at on the timeline: hit-testing, the details
// of one event, name search with next/previous, and per-name statistics of a selected time range.
//
//   if (auto e = rt::viz::hit_test(model, track, mouse_x, mouse_y - track_top, view)) {
//     rt::viz::EventDetails d = rt::viz::details(model, *e);
//     tooltip(d.name, d.duration_ns, d.self_ns, d.input_shapes);
//   }
//   rt::viz::EventSearch search(model, "addmm");
//   if (const rt::viz::EventRef* hit = search.next()) center_on(model.start_ns(*hit));
//   for (const rt::viz::RangeRow& row : rt::viz::range_stats(model, t0, t1)) ...   // largest total first
//
// Contracts
// - hit_test: y is measured from the top of the track, level = floor(y / row_height_px). The event
//   under x wins; else the nearest one within tolerance_px pixels; else none. Counter tracks and
//   rows without a level give none. O(log n).
// - details: times are the model's (repaired, see rt/viz/timeline.h); `repaired` says they differ
//   from the record. self_ns = duration minus the direct children on the next level.
// - EventSearch: case-insensitive substring of the event name (ops, backward nodes, user ranges,
//   GPU activities on tracks, "step N"); matches ordered by start, then track, level, index.
//   next()/previous() wrap around; an empty text matches nothing.
// - range_stats: per name over the thread and GPU-stream tracks (or the tracks given): count of
//   events touching [t0, t1] (end >= t0 and start <= t1), the time of each clipped to the range
//   (total), and that minus its children's clipped time (self). Sorted by total, largest first,
//   then by name. t1 < t0 throws rt::ValueError.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rt/viz/timeline.h"
#include "rt/viz/timeline_view.h"

namespace rt::viz {

struct HitOptions {
  double row_height_px = 20.0;
  double tolerance_px = 2.0;
};

std::optional<EventRef> hit_test(const TimelineModel& model, uint32_t track, double x, double y,
                                 const TimelineView& view, const HitOptions& options = {});

struct EventDetails {
  std::string name;
  std::string kind;          // "op", "backward node", "user range", "kernel", "memcpy", "memset",
                             // "cuda runtime", "cuda driver", "step", "collective", "point-to-point"
  std::string track;         // the track's name
  std::string module;        // ops only
  std::string plugin;        // ops a plugin registered: its id (rt/op_origin.h); empty for the engine's own
  std::string input_shapes;
  std::string input_dtypes;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t duration_ns = 0;
  int64_t self_ns = 0;
  uint32_t depth = 0;
  int64_t sequence_nr = -1;
  uint64_t correlation_id = 0;  // ops: correlation_id; GPU activities: external_id (the op's)
  int32_t device = -1;          // GPU activities
  int32_t stream = -1;
  uint64_t bytes = 0;           // memcpy / memset; collectives: every tensor's bytes
  // collectives (input_shapes and input_dtypes: the first tensor's shape and dtype)
  std::string group;            // "default"
  std::string call_site;        // "train.py:91"
  int64_t seq = -1;             // sequence number in the group
  int32_t peer = -1;            // root, source or destination
  int64_t queued_ns = 0;        // from the caller's enqueue to the backend's start
  bool repaired = false;
};

EventDetails details(const TimelineModel& model, const EventRef& e);

class EventSearch {
 public:
  EventSearch(const TimelineModel& model, std::string_view text);

  const std::vector<EventRef>& matches() const { return matches_; }
  std::optional<size_t> current() const { return current_; }
  const EventRef* next();      // nullptr when nothing matches
  const EventRef* previous();
  const EventRef* first_at_or_after(int64_t time_ns);  // wraps to the first match

 private:
  std::vector<EventRef> matches_;
  std::vector<int64_t> starts_;
  std::optional<size_t> current_;
};

struct RangeRow {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
};

std::vector<RangeRow> range_stats(const TimelineModel& model, int64_t t0, int64_t t1,
                                  std::span<const uint32_t> tracks = {});

}  // namespace rt::viz
