// Internal: builds the tracks of a session in display order (see rt/viz/timeline.h for the contract).
#pragma once
#include <string>
#include <vector>

#include "rt/viz/timeline.h"

namespace rt::viz {

struct BuiltTracks {
  std::vector<Track> tracks;
  size_t end_before_start = 0;
  size_t overlaps = 0;
  size_t unknown_thread_events = 0;
  size_t step_end_before_start = 0;  // the step track's share of end_before_start and overlaps
  size_t step_overlaps = 0;
};

BuiltTracks build_tracks(const prof::SessionData& data);

// The step track alone, appended to out.tracks (nothing without steps), its repairs counted in `out` (both
// in the totals and in the step_ shares).
void add_step_track(const prof::SessionData& data, BuiltTracks& out);

uint64_t counter_track_key(const std::string& name);  // FNV-1a of the counter name

// The collective tracks alone, one per (rank, group), appended to out.tracks in display order.
void add_collective_tracks(const prof::SessionData& data, BuiltTracks& out);

// Which track a GPU activity goes on: its thread's (CUDA runtime and driver calls) or its stream's (kernels,
// memcpys, memsets); synchronization records go on neither.
bool on_thread_track(prof::GpuActivityKind k);
bool on_stream_track(prof::GpuActivityKind k);

// An EventRef for records that are on no track.
inline constexpr EventRef kNotDrawn{UINT32_MAX, UINT32_MAX, UINT32_MAX};

// A thread track's name: its ThreadRecord's (nullptr: none), else "thread <id>".
std::string thread_track_name(const prof::SessionData& data, uint64_t thread, const prof::ThreadRecord* record);
// The session's StreamRecord name for (device, stream) when it has one, else "cuda:D stream S".
std::string stream_track_name(const prof::SessionData& data, int32_t device, int32_t stream);

// first_ns and last_ns of an interval track from its levels (each level's ends are non-decreasing).
void set_extent(Track& t);

// Where each kind of track goes, in the contract's order (rt/viz/timeline.h): steps; threads by first event
// then thread id, then collectives by group name, rank by rank; GPU streams by device then stream; counters
// by name.
bool displayed_before(const Track& a, const Track& b);

}  // namespace rt::viz
