// folded_exporter.h — the RtTraceExporter's export_trace: a session's slices as folded stacks
// (Note [Folded layout] in folded_layout.h says how slices become stacks and counts).
//
// The unit of a count is the session's metadata "sample_period_ns" (what the importer sets: the file's
// period), else kRecordedUnitNs (1 µs) for sessions that were recorded rather than sampled. A period other
// than the importer's default (10 ms) is written as a "# sample_period_ns=N" first line, so importing the file
// again restores the times.
#pragma once
#include <cstdint>

#include "rt/plugin/abi.h"

namespace folded {

inline constexpr int64_t kRecordedUnitNs = 1000;

RtStatus export_folded(const RtTraceSource* source, RtByteWriter write, void* writer_context, RtError* error);

}  // namespace folded
