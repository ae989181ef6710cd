// rt/plugin_host/trace_plugins.h — trace importer and exporter plugins: the host's sink and source, and
// running plugins in a child process so a crashing parser costs one failed import, never the caller.
//
//   // Importing a file with a plugin (out of process), or with whichever importer recognises it:
//   std::vector<rt::plugin::Manifest> importers = rt::plugin::find_trace_plugins(rt::plugin::Kind::Importer);
//   std::optional<rt::plugin::Manifest> pick = rt::plugin::detect_importer(importers, "profile.folded");
//   rt::plugin::TraceImport imported = rt::plugin::import_with_plugin(*pick, "profile.folded");
//   store.save_session(imported.session);          // rt::prof::SessionData, like import_chrome_trace gives
//
//   // Exporting a session through an exporter plugin (out of process):
//   rt::plugin::export_with_plugin(exporter, session, "profile.folded");
//
//   // In process, for tests and the child itself: the sink an importer fills, the source an exporter reads.
//   rt::plugin::TraceSessionBuilder builder;
//   importer->import_trace(data, size, builder.sink(), &error);
//   rt::prof::SessionData s = builder.finish();     // throws TracePluginError when the slices do not nest
//   rt::plugin::TraceSessionSource source(s);
//   exporter->export_trace(source.source(), write, context, &error);
//
// Contracts (docs/plugins.md, "Importers and exporters" has the whole story):
// - TraceSessionBuilder refuses, with RT_STATUS_INVALID_ARGUMENT and a message (error()), a NULL slice or
//   name, a struct_size too small for end_ns, a string longer than TraceLimits::max_string_bytes or not
//   UTF-8, end_ns < start_ns, a thread named two different ways, and more slices, metadata entries or bytes
//   than TraceLimits allow. Once it refused something it refuses everything after. finish() checks that the
//   slices of each thread nest (a slice starting inside another ends inside it), computes depth (an
//   importer's depth is ignored), sorts the ops by start (outer first), and fills threads, start_ns, end_ns.
//   Categories become OpKind: "op" -> Op, "backward" -> BackwardNode, anything else -> UserRange.
// - TraceSessionSource walks SessionData::ops thread by thread (SessionData::threads order, then threads only
//   ops name), each thread's in start order, parents before children, with depth and the nesting clamp of
//   rt/prof/nesting.h applied; category is "op", "backward" or "user". GPU activity, memory and counters are
//   not slices and are not passed. metadata(key) is SessionData::metadata, plus "name" for the session name.
// - import_with_plugin, export_with_plugin and detect_with_plugin run the plugin in a child process (the
//   rtorch-trace-plugin helper, found by trace_plugin_runner()), never in the caller. Everything the child
//   sends is checked (trace_wire.h's framing, then TraceSessionBuilder). A child that crashes, is killed,
//   exits non-zero, runs past TraceRunOptions::timeout, or sends bytes that are not the framing makes them
//   throw TracePluginError: "importer org.x.y crashed (SIGSEGV) while reading FILE; nothing was imported".
//   The caller's process is never at risk; an export never leaves a partial output file.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rt/plugin/abi.h"
#include "rt/plugin_host/manifest.h"
#include "rt/prof/events.h"

namespace rt::plugin {

// A trace plugin failed: refused the file, crashed, hung, or sent something invalid. what() says which
// plugin, what happened, and what was (not) done.
// How a trace plugin run failed. Refused is the clean way (the plugin returned an error status with its
// message); every other kind is a bug in the plugin, or a missing helper (Unavailable).
enum class TraceFailure {
  Refused,        // the plugin returned an error status: a malformed file, an unsupported feature
  InvalidTrace,   // the plugin produced slices or metadata the host refuses (TraceSessionBuilder)
  Crashed,        // the child died of a signal or exited non-zero
  TimedOut,       // the child ran past TraceRunOptions::timeout and was killed
  BrokeProtocol,  // the child sent bytes that are not the framing, or stopped before its result
  Unavailable     // the file, the helper or the plugin could not be used at all
};

// A trace plugin failed: refused the file, crashed, hung, or sent something invalid. what() says which
// plugin, what happened, and what was (not) done.
class TracePluginError : public std::runtime_error {
 public:
  explicit TracePluginError(const std::string& message, TraceFailure failure = TraceFailure::Unavailable)
      : std::runtime_error(message), failure_(failure) {}
  TraceFailure failure() const { return failure_; }

 private:
  TraceFailure failure_;
};

struct TraceLimits {
  uint64_t max_slices = 50'000'000;
  uint64_t max_bytes = uint64_t(4) << 30;    // slice records plus strings, as the framing counts them
  uint64_t max_string_bytes = 64 << 10;      // one name, thread name, category, metadata key or value
  uint64_t max_metadata = 4096;              // metadata entries
};

// ---- in process: the sink and the source ------------------------------------------------------------------

class TraceSessionBuilder {
 public:
  explicit TraceSessionBuilder(TraceLimits limits = {});
  TraceSessionBuilder(const TraceSessionBuilder&) = delete;
  TraceSessionBuilder& operator=(const TraceSessionBuilder&) = delete;

  // The table an importer writes into; valid while this builder lives.
  const RtTraceSink* sink() const { return &sink_; }
  RtStatus set_metadata(const char* key, const char* value);
  RtStatus add_slice(const RtTraceSlice* slice);

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }  // the first refusal, "" when none
  uint64_t slice_count() const { return data_.ops.size(); }

  // The session. Throws TracePluginError when something was refused or the slices of a thread do not nest.
  rt::prof::SessionData finish();

 private:
  RtStatus refuse(std::string message);
  RtStatus check_string(const char* s, const char* what, bool required, std::string_view& out);

  TraceLimits limits_;
  RtTraceSink sink_;
  rt::prof::SessionData data_;
  std::unordered_map<uint64_t, size_t> thread_index_;  // thread id -> data_.threads
  uint64_t bytes_ = 0;
  std::string error_;
};

class TraceSessionSource {
 public:
  explicit TraceSessionSource(const rt::prof::SessionData& session);  // `session` must outlive this
  TraceSessionSource(const TraceSessionSource&) = delete;
  TraceSessionSource& operator=(const TraceSessionSource&) = delete;

  const RtTraceSource* source() const { return &source_; }
  size_t slice_count() const { return order_.size(); }
  // What for_each_slice does, for C++ callers.
  RtStatus for_each(RtTraceSliceVisitor visit, void* visitor_context) const;
  const char* metadata(const char* key) const;

 private:
  struct Entry {
    uint32_t op;       // index into session.ops
    int64_t end_ns;    // after the nesting clamp
    int32_t depth;
  };
  const rt::prof::SessionData& session_;
  RtTraceSource source_;
  std::vector<Entry> order_;
};

// ---- out of process -----------------------------------------------------------------------------------------

struct TraceRunOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // the child is killed after this
  TraceLimits limits;
  std::filesystem::path runner;  // the helper; empty: trace_plugin_runner()
};

struct TraceImport {
  rt::prof::SessionData session;
  std::string plugin_id;
  std::string format;       // the importer's RtTraceImporter::format
  std::string plugin_log;   // what the plugin wrote to stdout/stderr (the last 4 KiB)
};

struct TraceExport {
  uint64_t slices = 0;      // slices passed to the exporter
  uint64_t bytes = 0;       // bytes written to the output
  std::string format;
  std::string plugin_log;
};

// The rtorch-trace-plugin helper: $RT_TRACE_PLUGIN_RUNNER, else beside the running executable, else in the bin/
// folder beside this library's lib/ folder (build/bin, <prefix>/bin). Throws TracePluginError naming the paths
// tried when there is none.
std::filesystem::path trace_plugin_runner();

// The readable plugins of `kind` (Importer or Exporter) under `search_paths` (default_search_paths() when
// empty), read from their manifests without loading any code, in discovery order. Only enabled ones (enabled
// by default and not switched off in the user's settings, rt/plugin_host/plugin_settings.h, or switched on
// there) unless `include_disabled`: naming a plugin (--plugin ID) is asking for it.
std::vector<Manifest> find_trace_plugins(Kind kind, const std::vector<std::filesystem::path>& search_paths = {},
                                         bool include_disabled = false);

// Imports `file` with `plugin`, out of process. Throws TracePluginError (the plugin refused the file, crashed,
// hung, sent garbage or invalid slices) and never returns a partial session.
TraceImport import_with_plugin(const Manifest& plugin, const std::filesystem::path& file,
                               const TraceRunOptions& options = {});

// Writes `session` to `output` with `plugin`'s exporter, out of process: into a temporary file beside `output`,
// renamed over it only when the exporter succeeded. Throws TracePluginError.
TraceExport export_with_plugin(const Manifest& plugin, const rt::prof::SessionData& session,
                               const std::filesystem::path& output, const TraceRunOptions& options = {});

// How sure `plugin`'s importer is (0..100) that `file` is its format, from the file's first 64 KiB, asked in a
// child process. A plugin that fails to load, crashes or hangs counts as 0 and its problem is in `problem`.
struct DetectResult {
  std::string plugin_id;
  int32_t confidence = 0;
  std::string problem;
};
DetectResult detect_with_plugin(const Manifest& plugin, const std::filesystem::path& file,
                                const TraceRunOptions& options = {});

// The importer most confident about `file` (ties: one whose manifest lists the file's extension, then the
// first in `importers`), or nullopt when none is above 0. `results` (optional) receives every plugin's answer.
std::optional<Manifest> detect_importer(const std::vector<Manifest>& importers, const std::filesystem::path& file,
                                        const TraceRunOptions& options = {},
                                        std::vector<DetectResult>* results = nullptr);

// The exporter plugin for `format`: the one whose manifest lists that format name, or whose id is `format`.
// nullopt when none does.
std::optional<Manifest> find_exporter(const std::vector<Manifest>& exporters, std::string_view format);

}  // namespace rt::plugin
