// The parent side of out-of-process trace plugins: import_with_plugin, export_with_plugin, detection
// (contracts in rt/plugin_host/trace_plugins.h; the child is trace_child.cpp).
#include <dlfcn.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "rt/plugin_host/crash_marker.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"
#include "rt/plugin_host/trace_plugins.h"
#include "trace/child_process.h"
#include "trace/trace_child.h"
#include "trace/trace_wire.h"

namespace rt::plugin {
namespace {

namespace fs = std::filesystem;

// What one child run delivered, checked record by record.
struct ChildRun {
  const Manifest& plugin;
  const TraceLimits& limits;
  wire::RecordReader reader;
  bool hello = false;
  bool result = false;
  int32_t status = 0;
  std::string message;
  std::string format;
  std::string problem;  // the child broke the protocol: set once, stops the run
  ChildRun(const Manifest& p, const TraceLimits& l) : plugin(p), limits(l), reader(l.max_string_bytes) {}

  // Feeds bytes; calls `handle` for each record between Hello and Result. false: stop the child.
  template <typename Handle>
  bool feed(std::string_view bytes, Handle handle) {
    try {
      reader.feed(bytes);
      while (std::optional<wire::Record> r = reader.next()) {
        if (result) return broke("sent a record after its result");
        if (!hello && r->type != wire::RecordType::Result) {  // a child that failed to load answers at once
          if (r->type != wire::RecordType::Hello) return broke("did not start with a hello record");
          if (r->number != wire::kProtocolVersion)
            return broke(fmt::format("speaks protocol {}, this host {}; the helper and the host are from different "
                                     "builds",
                                     r->number, wire::kProtocolVersion));
          if (r->text[0] != plugin.id) return broke(fmt::format("said it is \"{}\"", r->text[0]));
          hello = true;
          format = r->text[1];
          continue;
        }
        if (r->type == wire::RecordType::Result) {
          result = true;
          status = int32_t(r->number);
          message = r->text[0];
          continue;
        }
        if (!handle(*r)) return false;
      }
      return true;
    } catch (const wire::WireError& e) {
      return broke(fmt::format("sent bytes that are not the trace plugin framing ({})", e.what()));
    }
  }

  bool broke(std::string what) {
    if (problem.empty()) problem = std::move(what);
    return false;
  }
};

std::string output_note(const ChildExit& exit) {
  std::string out = exit.output;
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.empty()) return {};
  if (out.size() > 600) out = "..." + out.substr(out.size() - 600);
  return fmt::format(" (it printed: {})", out);
}

// The phase a crash marker of the child names ("load", "initialize"), removing the marker; "" when none.
std::string crash_phase(pid_t pid) {
  std::string phase;
  for (const CrashRecord& c : crashes_left_behind(kTraceChildApp)) {
    if (c.pid != long(pid)) continue;
    phase = c.phase;
    forget_crash(c);
  }
  return phase;
}

// Runs the helper in `mode` and checks how it ended; `doing` is "reading FILE" / "writing OUT".
template <typename Handle>
ChildRun run_child(const Manifest& plugin, const std::string& role, const std::string& mode,
                   const std::string& file, const std::string& doing, const std::string& consequence,
                   std::string_view input, const TraceRunOptions& options, std::string& log, Handle handle) {
  const fs::path runner = options.runner.empty() ? trace_plugin_runner() : options.runner;
  ChildRun run(plugin, options.limits);
  std::optional<ChildProcess> child;
  try {
    child.emplace(runner, std::vector<std::string>{mode, plugin.folder().string(), file,
                                                   format_limits(options.limits)});
  } catch (const std::exception& e) {
    throw TracePluginError(fmt::format("{} {} could not be started: {}; {}", role, plugin.id, e.what(), consequence),
                           TraceFailure::Unavailable);
  }
  const ChildExit exit = child->run(
      input, [&](std::string_view bytes) { return run.feed(bytes, handle); },
      std::chrono::steady_clock::now() + options.timeout);
  const std::string phase = crash_phase(child->pid());
  log = exit.output;
  const std::string where =
      phase.empty() ? doing
                    : fmt::format("{} the plugin, before {}", phase == "load" ? "loading" : "initializing", doing);
  if (!run.problem.empty())
    throw TracePluginError(fmt::format("{} {} {} while {}; {}", role, plugin.id, run.problem, doing, consequence),
                           TraceFailure::BrokeProtocol);
  if (exit.stopped) return run;  // the caller's handler stopped it and says why
  if (exit.timed_out || exit.signal != 0 || (exit.exited && exit.exit_code != 0))
    throw TracePluginError(fmt::format("{} {} {} while {}; {}{}", role, plugin.id, exit.describe(options.timeout),
                                       where, consequence, output_note(exit)),
                           exit.timed_out ? TraceFailure::TimedOut : TraceFailure::Crashed);
  if (!run.result || run.reader.holds_partial_record())
    throw TracePluginError(fmt::format("{} {} ended without finishing its answer while {}; {}{}", role, plugin.id,
                                       doing, consequence, output_note(exit)),
                           TraceFailure::BrokeProtocol);
  return run;
}

std::string status_word(int32_t status) {
  switch (status) {
    case RT_STATUS_INVALID_ARGUMENT: return "invalid input";
    case RT_STATUS_UNSUPPORTED: return "unsupported";
    case RT_STATUS_OUT_OF_MEMORY: return "out of memory";
    default: return "error";
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool lists_extension(const Manifest& m, const fs::path& file) {
  const std::string name = lower(file.filename().string());
  for (const FileFormat& f : m.formats)
    for (const std::string& ext : f.extensions)
      if (name.size() > ext.size() && name.ends_with(lower(ext))) return true;
  return false;
}

}  // namespace

fs::path trace_plugin_runner() {
  std::vector<fs::path> tried;
  if (const char* env = std::getenv("RT_TRACE_PLUGIN_RUNNER"); env && *env) {
    std::error_code ec;
    if (fs::is_regular_file(env, ec)) return env;
    throw TracePluginError(fmt::format("RT_TRACE_PLUGIN_RUNNER names {}, which does not exist; unset it or point "
                                       "it at the {} program",
                                       env, kTraceRunnerName));
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) tried.push_back(exe.parent_path() / kTraceRunnerName);
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&trace_plugin_runner), &self) && self.dli_fname) {
    const fs::path lib = fs::weakly_canonical(self.dli_fname, ec);
    tried.push_back(lib.parent_path().parent_path() / "bin" / kTraceRunnerName);
  }
  for (const fs::path& p : tried)
    if (fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0) return p;
  std::string list;
  for (const fs::path& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  throw TracePluginError(fmt::format("cannot find {}, the helper that runs trace plugins out of process (looked "
                                     "at {}); build it (scripts/build.sh {}) or set RT_TRACE_PLUGIN_RUNNER",
                                     kTraceRunnerName, list, kTraceRunnerName));
}

std::vector<Manifest> find_trace_plugins(Kind kind, const std::vector<fs::path>& search_paths,
                                         bool include_disabled) {
  PluginManager manager(include_disabled ? ManagerOptions{} : PluginSettings::load().manager_options());
  manager.discover(search_paths.empty() ? default_search_paths() : search_paths);
  std::vector<Manifest> found;
  for (const PluginRecord& r : manager.plugins()) {
    if (r.state == PluginState::Invalid || !r.manifest.has_kind(kind)) continue;
    if (r.state == PluginState::Disabled && !include_disabled) continue;
    found.push_back(r.manifest);
  }
  return found;
}

TraceImport import_with_plugin(const Manifest& plugin, const fs::path& file, const TraceRunOptions& options) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw TracePluginError(fmt::format("{} is not a file; give the path of a trace to import", file.string()));
  const std::string doing = fmt::format("reading {}", file.string());
  const std::string nothing = "nothing was imported";
  TraceSessionBuilder builder(options.limits);
  std::string refused;
  TraceImport out;
  ChildRun run = run_child(plugin, "importer", "import", fs::absolute(file).string(), doing, nothing, "", options,
                           out.plugin_log, [&](const wire::Record& r) {
                             RtStatus s = RT_STATUS_OK;
                             if (r.type == wire::RecordType::Metadata) {
                               s = builder.set_metadata(r.text[0].c_str(), r.text[1].c_str());
                             } else if (r.type == wire::RecordType::Slice) {
                               const RtTraceSlice slice = r.slice();
                               s = builder.add_slice(&slice);
                             } else {
                               refused = fmt::format("sent a {} record", wire::record_name(r.type));
                               return false;
                             }
                             if (s != RT_STATUS_OK) refused = "sent a value the host refuses: " + builder.error();
                             return s == RT_STATUS_OK;
                           });
  if (!refused.empty())
    throw TracePluginError(fmt::format("importer {} {} while {}; {}", plugin.id, refused, doing, nothing),
                           TraceFailure::InvalidTrace);
  if (run.status != RT_STATUS_OK)
    throw TracePluginError(fmt::format("importer {} could not read {} ({}): {}; {}", plugin.id, file.string(),
                                       status_word(run.status), run.message, nothing),
                           TraceFailure::Refused);
  try {
    out.session = builder.finish();
  } catch (const TracePluginError& e) {
    throw TracePluginError(fmt::format("importer {} produced a trace the host refuses while {}: {}; {}", plugin.id,
                                       doing, e.what(), nothing),
                           TraceFailure::InvalidTrace);
  }
  out.plugin_id = plugin.id;
  out.format = run.format;
  return out;
}

TraceExport export_with_plugin(const Manifest& plugin, const rt::prof::SessionData& session, const fs::path& output,
                               const TraceRunOptions& options) {
  const std::string doing = fmt::format("writing {}", output.string());
  const std::string nothing = "nothing was written";
  std::string input;
  for (const auto& [key, value] : session.metadata) wire::put_metadata(input, key, value);
  if (!session.name.empty() && !session.metadata.count("name")) wire::put_metadata(input, "name", session.name);
  const TraceSessionSource source(session);
  source.for_each(
      [](void* context, const RtTraceSlice* s) {
        wire::put_slice(*static_cast<std::string*>(context), *s);
        return RT_STATUS_OK;
      },
      &input);
  wire::put_end(input);

  const fs::path dir = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  const fs::path partial = dir / fmt::format(".{}.partial-{}", output.filename().string(), getpid());
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out)
    throw TracePluginError(fmt::format("cannot write {}: is the folder there and writable?", partial.string()));
  TraceExport result;
  result.slices = source.slice_count();
  try {
    std::string unexpected;
    ChildRun run = run_child(plugin, "exporter", "export", "-", doing, nothing, input, options, result.plugin_log,
                             [&](const wire::Record& r) {
                               if (r.type != wire::RecordType::Bytes) {
                                 unexpected = fmt::format("sent a {} record", wire::record_name(r.type));
                                 return false;
                               }
                               out.write(r.text[0].data(), std::streamsize(r.text[0].size()));
                               result.bytes += r.text[0].size();
                               return bool(out);
                             });
    if (!unexpected.empty())
      throw TracePluginError(fmt::format("exporter {} {} while {}; {}", plugin.id, unexpected, doing, nothing),
                             TraceFailure::BrokeProtocol);
    if (!out) throw TracePluginError(fmt::format("cannot write {}: disk full?", partial.string()));
    if (run.status != RT_STATUS_OK)
      throw TracePluginError(fmt::format("exporter {} could not write {} ({}): {}; {}", plugin.id, output.string(),
                                         status_word(run.status), run.message, nothing),
                             TraceFailure::Refused);
    out.close();
    if (!out) throw TracePluginError(fmt::format("cannot write {}: disk full?", partial.string()));
    fs::rename(partial, output);
    result.format = run.format;
  } catch (...) {
    out.close();
    std::error_code ec;
    fs::remove(partial, ec);
    throw;
  }
  return result;
}

DetectResult detect_with_plugin(const Manifest& plugin, const fs::path& file, const TraceRunOptions& options) {
  DetectResult out{.plugin_id = plugin.id, .confidence = 0, .problem = {}};
  std::string log;
  try {
    int32_t confidence = -1;
    bool unexpected = false;
    ChildRun run = run_child(plugin, "importer", "detect", fs::absolute(file).string(),
                             fmt::format("detecting the format of {}", file.string()), "it was not asked again",
                             "", options, log, [&](const wire::Record& r) {
                               if (r.type != wire::RecordType::Detect || confidence >= 0) {
                                 unexpected = true;
                                 return false;
                               }
                               confidence = int32_t(std::clamp<int64_t>(r.number, 0, 100));
                               return true;
                             });
    if (unexpected)
      out.problem = fmt::format("importer {} answered more than one confidence for {}", plugin.id, file.string());
    else if (run.status != RT_STATUS_OK)
      out.problem = fmt::format("importer {} could not look at {}: {}", plugin.id, file.string(), run.message);
    else if (confidence < 0)
      out.problem = fmt::format("importer {} gave no answer for {}", plugin.id, file.string());
    else
      out.confidence = confidence;
  } catch (const TracePluginError& e) {
    out.problem = e.what();
  }
  return out;
}

std::optional<Manifest> detect_importer(const std::vector<Manifest>& importers, const fs::path& file,
                                        const TraceRunOptions& options, std::vector<DetectResult>* results) {
  std::optional<Manifest> best;
  int32_t best_confidence = 0;
  bool best_by_extension = false;
  for (const Manifest& m : importers) {
    DetectResult r = detect_with_plugin(m, file, options);
    const bool by_extension = lists_extension(m, file);
    if (r.confidence > best_confidence ||
        (r.confidence > 0 && r.confidence == best_confidence && by_extension && !best_by_extension)) {
      best = m;
      best_confidence = r.confidence;
      best_by_extension = by_extension;
    }
    if (results) results->push_back(std::move(r));
  }
  return best;
}

std::optional<Manifest> find_exporter(const std::vector<Manifest>& exporters, std::string_view format) {
  for (const Manifest& m : exporters)
    for (const FileFormat& f : m.formats)
      if (f.name == format) return m;
  for (const Manifest& m : exporters)
    if (m.id == format) return m;
  return std::nullopt;
}

}  // namespace rt::plugin
