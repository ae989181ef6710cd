// rt/viz/timeline.h — the timeline's tracks, built once from a profiling session: one track per CPU
// thread, per process group's collectives, per GPU device+stream, per counter, and one for the steps. The view model every timeline
// query reads (level of detail, flows, selection, search); no Qt, no GL, no ImGui.
//
//   auto data = std::make_shared<const rt::prof::SessionData>(session.snapshot());
//   rt::viz::TimelineModel model(data);
//   for (size_t t = 0; t < model.tracks().size(); ++t) {
//     const rt::viz::Track& track = model.tracks()[t];
//     std::printf("%s: %zu levels\n", track.name.c_str(), track.levels.size());
//   }
//   for (const rt::viz::TimelineWarning& w : model.warnings())
//     std::puts(w.text().c_str());                 // "3 overlapping events repaired"
//
//   // A live session: the model follows the data as it grows (rt/prof/session_delta.h).
//   auto live = std::make_shared<rt::prof::SessionData>(std::move(first_read.records));
//   rt::viz::TimelineModel following(live);
//   following.append(rt::prof::append_delta(*live, session.snapshot_since(cursor)));
//
// Contracts
// - Track order: the step track first (when the session has steps), then CPU threads by their first
//   event (ties by thread id) followed by the collective tracks by group name, GPU streams by (device,
//   stream), counters by name. In a merged job (rt/prof/rank_merge.h) the threads and collective tracks
//   go rank by rank, in rank order. A TrackId names what a track shows (thread id, rank and group,
//   device+stream, counter name), so it stays the same across snapshots of one live session even when
//   new tracks appear; track indexes are positions.
// - Collective tracks ("collectives: default", "rank 1 · collectives: default") hold each CollectiveRecord
//   of one process group (and rank) from its start to its end. Collectives overlap without nesting, so
//   their levels are lanes (Note [Collective lanes] in rt/prof/nesting.h), not depths, and an event's self
//   time is its whole duration. append() rebuilds them whenever collectives arrived (a few per step).
// - Thread tracks hold ops, backward nodes and user ranges (OpRecord), plus CUDA runtime and driver
//   calls (GpuActivityRecord Runtime/Driver) on the thread that made them. GPU tracks hold kernels,
//   memcpys and memsets; synchronization records are not drawn. Counter tracks hold samples, not
//   intervals (their levels are empty); the step track holds one event per StepRecord.
// - Levels are rebuilt from the intervals, not from OpRecord::depth, by rt::prof::nest_slices, as in
//   the exported trace and the key_averages table (Note [Nesting clamp] in rt/prof/nesting.h): on a
//   track, an event that starts at or after another's start and before its end is its child; one that
//   starts where another ends, zero width included, is its sibling. Within a level events are sorted by
//   start and do not overlap, so starts and ends are both non-decreasing.
// - Repairs (each counted in warnings()): end < start -> end = start; an event that starts inside
//   another but ends after it is clamped to end with it ("overlapping events repaired"); an op or
//   runtime call on a thread without a ThreadRecord gets a track named "thread <id>".
// - The model keeps the SessionData alive (shared_ptr) and never changes it. Whoever grows it (append_delta)
//   calls append() with the growth before using the model again.
// - append(growth) leaves the model exactly as a new TimelineModel of the grown data would be: the same tracks
//   in the same order, levels, extents, warnings and find(). Its cost is what arrived, not the session: only
//   the tracks that received records re-nest, from their earliest new start (a late outer op pulls its
//   children down a level; Note [Re-nesting a tail] in visualizers/src/timeline/track_tail.cpp), counter
//   tracks merge their new samples, and the step track is rebuilt when steps changed (a session has few).
//   EventRefs and track indexes taken before may name other events and tracks after it (a new track moves
//   the ones after it); find() again by record. A growth that does not continue what the model holds (its
//   first new op, GPU activity, counter or step is not where the model ends) throws rt::ValueError.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"

namespace rt::viz {

enum class TrackKind : uint8_t { Steps, Thread, GpuStream, Counter, Collectives };

// What a track shows: kind + thread id / (device, stream) / hash of the counter name / (hash of the group
// name, rank).
struct TrackId {
  TrackKind kind = TrackKind::Thread;
  uint64_t key = 0;
  int64_t sub = 0;
  bool operator==(const TrackId&) const = default;
};

// Where a timeline event comes from in the SessionData.
enum class EventSource : uint8_t { Op, Gpu, Step, Collective };

// One level of a track: the events at one nesting depth, as parallel arrays sorted by start.
struct TrackLevel {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<uint32_t> records;       // index into SessionData::ops / gpu / steps / collectives
  std::vector<EventSource> sources;
  size_t size() const { return starts.size(); }
};

struct Track {
  TrackId id;
  std::string name;                    // "main", "thread 7", "cuda:0 stream 7" (or the SessionData's
                                       // StreamRecord name), "loss", "steps", "collectives: default"
  int32_t rank = -1;                   // threads and collectives of a merged job: their rank
  std::vector<TrackLevel> levels;      // levels[0] is the outermost
  std::vector<uint32_t> counter_samples;  // Counter tracks: indexes into SessionData::counters, by time
  std::vector<int64_t> counter_times;     // ... and their times and values, in the same order
  std::vector<double> counter_values;
  int64_t first_ns = 0;                // extent of the track's events (or samples)
  int64_t last_ns = 0;
  size_t event_count() const;
};

// One event of the timeline: track index, level (depth) and index within the level.
struct EventRef {
  uint32_t track = 0;
  uint32_t level = 0;
  uint32_t index = 0;
  bool operator==(const EventRef&) const = default;
};

enum class TimelineWarningKind : uint8_t { EndBeforeStart, Overlap, UnknownThread };

struct TimelineWarning {
  TimelineWarningKind kind;
  size_t count = 0;
  std::string text() const;  // "3 overlapping events repaired"
};

class TimelineModel {
 public:
  // Throws rt::ValueError when data is null.
  explicit TimelineModel(std::shared_ptr<const prof::SessionData> data);

  // Takes in the records the data gained (see the contracts above).
  void append(const prof::SessionGrowth& growth);

  const prof::SessionData& data() const { return *data_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  std::optional<size_t> find_track(const TrackId& id) const;
  const std::vector<TimelineWarning>& warnings() const { return warnings_; }  // only non-zero counts
  int64_t first_ns() const { return first_ns_; }  // extent of every track; 0, 0 when empty
  int64_t last_ns() const { return last_ns_; }
  size_t event_count() const { return event_count_; }  // interval events and counter samples

  // Accessors for one event; an out-of-range ref throws rt::IndexError.
  int64_t start_ns(const EventRef& e) const;
  int64_t end_ns(const EventRef& e) const;
  EventSource source(const EventRef& e) const;
  uint32_t record(const EventRef& e) const;  // index into ops / gpu / steps / collectives
  std::string name(const EventRef& e) const; // op, kernel or collective name; "step 3" for steps
  // Time of e minus the time of its children on the next level; never negative. Collectives: their duration.
  int64_t self_ns(const EventRef& e) const;
  // The event of `record` in ops (EventSource::Op), gpu (Gpu), steps or collectives, if it is on a track.
  std::optional<EventRef> find(EventSource source, uint32_t record) const;

 private:
  struct Repairs {
    size_t end_before_start = 0;  // every track's
    size_t overlaps = 0;
    size_t step_end_before_start = 0;  // the step track's share
    size_t step_overlaps = 0;
    size_t unknown_thread_events = 0;
  };

  const TrackLevel& level_of(const EventRef& e) const;
  void finish_tracks();  // from the tracks: slot positions, warnings, extent and event count
  void append_steps();
  void append_collectives();
  void append_intervals(const prof::SessionGrowth& growth);
  void append_counters(const prof::SessionGrowth& growth);

  std::shared_ptr<const prof::SessionData> data_;
  std::vector<Track> tracks_;
  std::vector<TimelineWarning> warnings_;
  // A track keeps its slot for the model's life while its position may change (append); op_events_ and
  // gpu_events_ name tracks by slot.
  std::vector<uint32_t> slot_of_;      // by position
  std::vector<uint32_t> position_of_;  // by slot; UINT32_MAX once the track is gone
  std::vector<EventRef> op_events_;    // by OpRecord index
  std::vector<EventRef> gpu_events_;   // by GpuActivityRecord index; track == UINT32_MAX when not drawn
  Repairs repairs_;
  size_t counters_seen_ = 0;
  size_t steps_seen_ = 0;
  size_t collectives_seen_ = 0;
  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
  size_t event_count_ = 0;
};

}  // namespace rt::viz
