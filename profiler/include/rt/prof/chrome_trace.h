// rt/prof/chrome_trace.h — Chrome Trace Event JSON export and import (Perfetto, chrome://tracing,
// PyTorch profiler traces).
//
//   rt::prof::export_chrome_trace(session, "step.json.gz");             // gzip chosen by extension
//   auto imported = rt::prof::import_chrome_trace("pytorch_trace.json", {
//       .progress = [](const rt::prof::TraceProgress& p) { fmt::print("\r{} {}/{}", p.phase, p.done, p.total); }});
//   use(imported.session);  // SessionData, as a live session would have recorded it
//
// Export contracts
// - Output is {"traceEvents":[...], "displayTimeUnit":"ns", "baseTimeNanoseconds":B, "rtSession":{...}, ...}.
//   "ts"/"dur" are microseconds with exactly 3 decimals (ns precision), relative to B = the session's
//   start on the Unix-epoch clock (B = start_ns + clock_offset_ns), as Kineto 2 writes them.
// - Tracks: one CPU process (pid from metadata "pid", else this process) with a thread per ThreadRecord
//   (tid = os_tid, or the engine thread id when os_tid is 0) and a "Steps" thread holding one
//   "ProfilerStep#N" slice per step; one "GPU <d>" process per device (pid = d) with a "stream <s>" thread
//   per stream for kernels, memcpy, memset and synchronization. CUDA runtime/driver calls sit on the CPU
//   thread that made them. If a device index equals the CPU pid, the CPU pid moves to pid + 2^20.
// - Ops, backward nodes, user ranges and runtime calls are "X" slices that nest strictly per thread after
//   rounding: a child that would end after its parent (overlap in the input, or rounding) is clamped to
//   the parent's end. See Note [Nesting clamp] in rt/prof/nesting.h.
// - Flows: "ac2g" (id = CUPTI correlation id) from the runtime launch (or the op whose correlation_id is
//   the kernel's external_id) to the kernel; "fwdbwd" (id = sequence_nr) from the first op with a sequence
//   number to the BackwardNode with the same one. Every "s" has its "f" ("bp":"e").
// - Memory: one "[memory]" instant per MemoryRecord (PyTorch's args: "Addr", "Bytes", "Total Allocated",
//   "Device Type", "Device Id", plus "Category", "Op") and "C" counters per device, series "total" and
//   one per category ("Memory (CPU)", "Memory (cuda:0)"; cat "memory"). Counters (loss, lr) are "C" events.
// - Every string is escaped; control characters become \u00XX, invalid UTF-8 becomes U+FFFD. Non-finite
//   counter values are written as null (never NaN/Inf).
// - Gradient histograms (SessionData::gradient_histograms) have no Trace Event form: they are written as a
//   top-level "rtGradientHistograms" array of {"name", "step", "time_ns" (ns from baseTimeNanoseconds), "numel",
//   "norm" (a number, or "nan"/"inf"), "lo", "hi", "nan_count", "inf_count", "counts"}, which Perfetto and
//   chrome://tracing ignore; absent when there are none. See Note [Gradient histograms in traces].
//
// Import contracts
// - Accepts the JSON-array form and the {"traceEvents":[...]} object form, .json or .json.gz (by content:
//   gzip magic). Events are parsed one object at a time from fixed-size chunks (memory is bounded by the
//   chunk size plus the largest single event plus the resulting SessionData).
// - Understands Kineto/PyTorch names: cat cpu_op/operator/user_annotation/python_function/kernel/
//   gpu_memcpy/gpu_memset/cuda_runtime/cuda_driver/cuda_sync, args "Input Dims", "Input type",
//   "Sequence number", "External id", "correlation", "device", "stream", "[memory]" instants,
//   "ProfilerStep#N" slices (become StepRecords), "ac2g"/"fwdbwd" flows (links are rebuilt from ids), and our
//   own "rtGradientHistograms" (each record checked with gradient_histogram_problem; a bad one throws TraceError).
// - Repairs imperfections and counts each repair in the report: overlapping slices (clamped into their
//   parent), "X" without "dur" (duration 0), unsorted events, "B"/"E" pairs (unclosed "B" ends at the
//   last timestamp), "ts"/"pid"/"tid" given as strings.
// - Malformed input throws TraceError with the byte offset of the problem (in the decompressed stream
//   for .gz): "trace.json: invalid JSON at byte 12345: ...". Unknown phases, unknown instants and the
//   profiler's own "Trace" spans are skipped and counted; "X" slices of an unknown category become
//   UserRange ops. Only the fields that are read are type-checked (simdjson On Demand skips the rest).
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "rt/error.h"
#include "rt/export.h"
#include "rt/prof/events.h"

RT_API_BEGIN

namespace rt::prof {

// A malformed or unreadable trace. byte_offset() is -1 when the problem has no position (cannot open).
class TraceError : public rt::ValueError {
 public:
  TraceError(const std::string& message, int64_t byte_offset)
      : rt::ValueError(message), byte_offset_(byte_offset) {}
  int64_t byte_offset() const { return byte_offset_; }

 private:
  int64_t byte_offset_;
};

// phase "export": done/total events; phase "import": done/total input bytes (compressed bytes for .gz).
struct TraceProgress {
  std::string_view phase;
  uint64_t done = 0;
  uint64_t total = 0;
};
using TraceProgressFn = std::function<void(const TraceProgress&)>;

struct ChromeExportOptions {
  int gzip_level = 6;        // .json.gz only, 1 (fast) .. 9 (small)
  TraceProgressFn progress;  // called about every 256k events and once at the end
};

struct ChromeExportStats {
  uint64_t events = 0;        // trace events written, metadata and flows included
  uint64_t bytes = 0;         // uncompressed JSON bytes
  uint64_t clamped_ops = 0;   // slices shortened to nest inside their parent
};

// Writes `path` (.json, or gzip when it ends in .gz). Throws TraceError when the file cannot be written.
ChromeExportStats export_chrome_trace(const SessionData& session, const std::filesystem::path& path,
                                      const ChromeExportOptions& options = {});
// The same JSON as a string (small sessions, tests, network transfer).
std::string chrome_trace_json(const SessionData& session, ChromeExportStats* stats = nullptr);

struct ChromeImportOptions {
  TraceProgressFn progress;           // called after each chunk
  size_t chunk_bytes = size_t(4) << 20;
};

struct ChromeImportReport {
  uint64_t events = 0;             // trace events read
  uint64_t skipped = 0;            // events of unknown phase or category, not imported
  uint64_t clamped_slices = 0;     // slices shortened to nest inside their parent
  uint64_t missing_dur = 0;        // "X" events without "dur"
  uint64_t negative_dur = 0;       // slices ending before they start ("dur" < 0, "E" before "B"): end set to start
  uint64_t unmatched_end = 0;      // "E" without a "B" on its thread
  uint64_t unclosed_begin = 0;     // "B" without an "E"
};

struct ChromeImport {
  SessionData session;
  ChromeImportReport report;
};

ChromeImport import_chrome_trace(const std::filesystem::path& path, const ChromeImportOptions& options = {});
// `source_name` prefixes error messages in place of a file name.
ChromeImport import_chrome_trace_text(std::string_view json, std::string_view source_name = "<memory>",
                                      const ChromeImportOptions& options = {});

}  // namespace rt::prof

RT_API_END
