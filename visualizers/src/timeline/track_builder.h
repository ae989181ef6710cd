// Internal: builds the tracks of a session in display order (see rt/viz/timeline.h for the contract).
#pragma once
#include <vector>

#include "rt/viz/timeline.h"

namespace rt::viz {

struct BuiltTracks {
  std::vector<Track> tracks;
  size_t end_before_start = 0;
  size_t overlaps = 0;
  size_t unknown_thread_events = 0;
};

BuiltTracks build_tracks(const prof::SessionData& data);

uint64_t counter_track_key(const std::string& name);  // FNV-1a of the counter name

}  // namespace rt::viz
