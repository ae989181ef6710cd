// Internal: growing a built track with new records (TimelineModel::append). An interval track re-nests only its
// tail, from the earliest new start; a counter track merges the new samples in. Either leaves the track exactly
// as build_tracks would build it from all the records (see Note [Re-nesting a tail] in track_tail.cpp).
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rt/viz/timeline.h"

namespace rt::viz {

using TrackRecord = std::pair<uint32_t, EventSource>;  // (index into ops or gpu, which)

// Repairs that changed: the tail's new negative lengths, and its clamps before and after re-nesting.
struct TailRepairs {
  size_t end_before_start = 0;  // new records whose end preceded their start
  size_t clamped_before = 0;    // clamped events of the old tail (no longer counted)
  size_t clamped_after = 0;     // clamped events of the re-nested tail
};

// Where re-nesting put an event.
struct PlacedEvent {
  TrackRecord record;
  uint32_t level = 0;
  uint32_t index = 0;
};

// Adds `added` (ops and CUDA runtime/driver calls, or stream activities, none on the track yet) to an interval
// track and re-nests the events that start at or after the earliest of them; sets the track's extent.
// Records at or past first_new_op / first_new_gpu are the new ones (their negative lengths are counted).
// Appends to `placed` every event the re-nesting placed (the re-nested old ones too).
void renest_tail(Track& track, const prof::SessionData& data, std::span<const TrackRecord> added, size_t first_new_op,
                 size_t first_new_gpu, TailRepairs& repairs, std::vector<PlacedEvent>& placed);

// Merges new samples (indexes into data.counters, ascending, all of this track's counter) into a counter track,
// sorted by time with ties in record order, and sets its extent.
void merge_counter_samples(Track& track, const prof::SessionData& data, std::span<const uint32_t> added);

}  // namespace rt::viz
