// Strict per-track nesting of slices, shared by the exporter and the importer.
//
// Note [Nesting clamp]
// Chrome-trace viewers build a slice stack per thread; a slice that starts inside another but ends after
// it breaks that stack (Perfetto reports "slice ended after parent", chrome://tracing drops or misdraws
// it). Traces hit this when timestamps are rounded to microseconds (PyTorch's legacy exporter) or when
// clocks are read in an order that lets a child end a few ns after its parent. We sort a track's slices
// by (start ascending, end descending, rank ascending) so parents come first, keep a stack of open ends,
// and shorten any slice that would outlive the innermost open slice to end with it. Starts never move,
// so flow events bound to a slice's start stay inside it.
#pragma once
#include <cstdint>
#include <vector>

namespace rt::prof::trace {

struct Slice {
  int64_t start = 0;
  int64_t end = 0;   // in: recorded end; out: clamped end
  int32_t rank = 0;  // tie-break when start and end are equal: lower rank is the parent (e.g. depth)
  int32_t depth = 0; // out: number of enclosing slices
  uint32_t index = 0;  // the caller's record index
};

// Sorts `slices` parent-first, clamps ends and fills depth; returns how many ends were clamped.
// A slice whose end precedes its start is treated as zero-length.
uint64_t nest_strictly(std::vector<Slice>& slices);

}  // namespace rt::prof::trace
