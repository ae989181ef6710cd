// rt/prof/nesting.h — the one rule that turns the intervals of one track (a thread's ops and CUDA runtime
// calls, a GPU stream, the steps) into a strict tree: depth, direct parent, clamped end and self time. The
// Chrome-trace exporter and importer, the summaries (key_averages, step_breakdown) and the timeline's track
// builder all call it, so the table, the timeline and the exported trace agree on overlapping, rounded or
// otherwise malformed input.
//
//   std::vector<rt::prof::NestedSlice> slices;
//   for (uint32_t i = 0; i < data.ops.size(); ++i)
//     if (data.ops[i].thread == thread) slices.push_back(rt::prof::slice_of(data.ops[i], i));
//   const rt::prof::NestingRepairs repairs = rt::prof::nest_slices(slices);  // sorts parent-first
//   for (const rt::prof::NestedSlice& s : slices) {
//     const int64_t parent_op = s.parent < 0 ? -1 : int64_t(slices[size_t(s.parent)].index);
//     fmt::print("op {}: depth {}, parent op {}, [{}, {}], self {} ns\n", s.index, s.depth, parent_op, s.start,
//                s.end, s.self_ns);
//   }
//   fmt::print("{} ends clamped, {} negative lengths\n", repairs.clamped, repairs.end_before_start);
//
// Note [Nesting clamp]
// Chrome-trace viewers build a slice stack per thread; a slice that starts inside another but ends after
// it breaks that stack (Perfetto reports "slice ended after parent", chrome://tracing drops or misdraws
// it). Traces hit this when timestamps are rounded to microseconds (PyTorch's legacy exporter) or when
// clocks are read in an order that lets a child end a few ns after its parent. We sort a track's slices
// by (start ascending, end descending, rank ascending, index ascending) so parents come first, keep a
// stack of open ends, and shorten any slice that would outlive the innermost open slice to end with it.
// Starts never move, so flow events bound to a slice's start stay inside it. The details, which every
// consumer shares:
// - A slice whose end precedes its start is zero-length.
// - An open slice closes when it ends at or before the next slice's start, as Perfetto and
//   chrome://tracing close them: a slice starting where another ends is its sibling, a zero-length one
//   included; a zero-length slice at another's start is its child.
// - Of two slices with equal start and end the lower rank is the parent (slice_of: an op's recorded
//   depth; CUDA runtime and driver calls inside the op that made them), then the lower index.
// - Self time is the clamped duration minus the clamped durations of the direct children.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/export.h"
#include "rt/prof/events.h"

RT_API_BEGIN

namespace rt::prof {

struct NestedSlice {
  int64_t start = 0;
  int64_t end = 0;      // in: recorded end; out: clamped end, never before start
  uint32_t index = 0;   // in: the caller's record index, carried through the sort
  int32_t rank = 0;     // in: tie-break for equal start and end, lower is the parent
  int32_t depth = 0;    // out: number of enclosing slices
  int32_t parent = -1;  // out: position of the direct parent in the sorted vector; -1 at the top
  int64_t self_ns = 0;  // out: end - start minus the durations of the direct children
};

struct NestingRepairs {
  uint64_t clamped = 0;           // ends shortened to their parent's end
  uint64_t end_before_start = 0;  // ends moved up to their start
};

// Sorts one track's `slices` parent-first and fills end, depth, parent and self_ns (Note [Nesting clamp]).
NestingRepairs nest_slices(std::vector<NestedSlice>& slices);

// The order nest_slices puts a track in, parents first: start ascending, end descending, rank ascending,
// index ascending (Note [Nesting clamp]). Inline: sorts call it a million times.
inline bool nests_before(const NestedSlice& a, const NestedSlice& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  if (a.rank != b.rank) return a.rank < b.rank;
  return a.index < b.index;
}

// A slice still open while a track is nested: its clamped end and the caller's position for it.
struct OpenSlice {
  int64_t end = 0;
  int32_t position = -1;
};

// One step of nest_slices, for callers that nest a track piece by piece (the live timeline re-nests only
// the tail of a track, rebuilding `open` from the part it keeps). `s` must sort (nests_before) after every
// slice stepped before it with the same `open` (innermost last), and its end must not precede its start
// (nest_slices repairs that first). Closes the open slices that end at or before s.start, clamps s.end to
// the innermost open end, sets s.depth (the open slices) and s.parent (the innermost's position, -1 when
// none), then opens s at `position`. Returns true when s.end was clamped. Leaves self_ns alone. Inline, as
// nests_before: nest_slices and the timeline's tail re-nesting run it once per slice.
inline bool nest_next(NestedSlice& s, int32_t position, std::vector<OpenSlice>& open) {
  while (!open.empty() && open.back().end <= s.start) open.pop_back();
  s.parent = open.empty() ? -1 : open.back().position;
  const bool clamped = !open.empty() && s.end > open.back().end;
  if (clamped) s.end = open.back().end;
  s.depth = int32_t(open.size());
  open.push_back({s.end, position});
  return clamped;
}

// Note [Collective lanes]
// Collectives do not nest: a gloo group runs two at once, MPI and NCCL queue several, so their intervals
// overlap without one containing the other. They are packed into lanes instead, as Perfetto packs async
// slices: in start order (ties by the lower index), each goes into the first lane whose last interval ended
// at or before its start, else into a new lane. The exporter writes a lane per Chrome-trace thread and
// the timeline a lane per level, so both show the same picture. An end before the start counts as the start.
//
//   std::vector<uint32_t> lane = rt::prof::pack_collective_lanes(data.collectives);  // by record index
std::vector<uint32_t> pack_collective_lanes(const std::vector<CollectiveRecord>& collectives);

// A record's slice with the rank every consumer gives it (Note [Nesting clamp]).
NestedSlice slice_of(const OpRecord& op, uint32_t index);
NestedSlice slice_of(const GpuActivityRecord& activity, uint32_t index);
NestedSlice slice_of(const StepRecord& step, uint32_t index);

}  // namespace rt::prof

RT_API_END
