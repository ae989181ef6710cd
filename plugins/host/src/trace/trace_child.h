// trace_child.h — the child side of running a trace plugin out of process: what rtorch-trace-plugin runs.
//
//   rtorch-trace-plugin detect PLUGIN_FOLDER FILE LIMITS     the importer's detect on FILE's first 64 KiB
//   rtorch-trace-plugin import PLUGIN_FOLDER FILE LIMITS     the importer's import_trace on FILE
//   rtorch-trace-plugin export PLUGIN_FOLDER - LIMITS        the exporter over the session read from stdin
//
// LIMITS is "max_slices:max_bytes:max_string_bytes:max_metadata" (TraceLimits). The child loads the plugin
// with a PluginManager (app "trace-plugin", so a crash while loading leaves a marker naming the phase), writes
// Hello, then the records of its mode (Note [Trace plugin framing] in trace_wire.h) on fd 3, and last a Result
// with the plugin's status and message; it exits 0 once the Result is written. Slices an importer produces go
// through a TraceSessionBuilder here too, so the importer gets the sink's refusals as the ABI promises; the
// parent checks everything again.
#pragma once
#include <string>

#include "rt/plugin_host/trace_plugins.h"

namespace rt::plugin {

inline constexpr const char* kTraceRunnerName = "rtorch-trace-plugin";
inline constexpr const char* kTraceChildApp = "trace-plugin";
inline constexpr size_t kDetectWindow = size_t(64) << 10;

std::string format_limits(const TraceLimits& limits);

int trace_plugin_child_main(int argc, char** argv);

}  // namespace rt::plugin
