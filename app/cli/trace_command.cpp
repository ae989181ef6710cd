// `rtorch trace list|export|import|summary`: the profiler's session store and Chrome traces on the
// command line (trace_source.h reads, trace_report.h formats, progress_line.h shows progress). Other formats
// come from importer and exporter plugins, run out of process (trace_plugin_io.h picks the plugin).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <optional>

#include "command.h"
#include "progress_line.h"
#include "rt/error.h"
#include "rt/plugin_host/trace_plugins.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/store.h"
#include "trace_plugin_io.h"
#include "trace_report.h"
#include "trace_source.h"

namespace rt::cli {
namespace {

const std::vector<std::string> kSortKeys = {"cpu_time_total",  "self_cpu_time_total",  "cpu_time", "count",
                                            "cuda_time_total", "self_cuda_time_total", "cuda_time"};

std::optional<int64_t> given(const CLI::Option* option, int64_t value) {
  return option->count() > 0 ? std::optional<int64_t>(value) : std::nullopt;
}

class TraceCommand final : public Command {
 public:
  std::string name() const override { return "trace"; }
  std::string summary() const override {
    return "List, export, import and summarise profiling sessions (SQLite store, Chrome/Perfetto traces)";
  }

  void configure(CLI::App& app) override {
    app.require_subcommand(1);

    list_ = app.add_subcommand("list", "List the sessions of a store (id, created, duration, complete, counts)");
    list_->add_option("store", store_path_, "Session store (.sqlite)")->required()->type_name("DB");

    export_ = app.add_subcommand("export", "Write a session as a Chrome/Perfetto trace, or another format through "
                                           "an exporter plugin (--format folded-stacks)");
    export_->add_option("source", input_, "Session store (.sqlite), or a trace file (.json/.json.gz)")
        ->required()
        ->type_name("DB|TRACE");
    export_session_ = export_->add_option("--session", session_, "Session id (default: the latest)")->type_name("N");
    export_->add_option("-o,--output", output_, "File to write (.json, .json.gz for gzip, or the plugin's format)")
        ->required()
        ->type_name("OUT");
    export_->add_option("--format", format_,
                        "chrome, or a format an exporter plugin writes, e.g. folded-stacks (default: from OUT's "
                        "extension)")
        ->type_name("FORMAT");
    export_->add_option("--plugin", plugin_id_, "Exporter plugin to use, by id (run out of process)")->type_name("ID");

    import_ = app.add_subcommand("import", "Add a trace to a store: Chrome traces (ours, PyTorch's, Perfetto's), "
                                           "or any format an importer plugin reads (run out of process)");
    import_->add_option("trace", input_, "Trace to read (.json, .json.gz, or a plugin's format)")
        ->required()
        ->type_name("FILE");
    import_->add_option("--plugin", plugin_id_,
                        "Importer plugin to use, by id (default: the built-in reader for Chrome traces, else the "
                        "plugin whose detect is most sure)")
        ->type_name("ID");
    import_store_ = import_->add_option("--store", store_path_, "Store to add it to (created when missing; default: "
                                        + rt::prof::Store::default_path().string() + ")")
                        ->type_name("DB");
    import_->add_option("--name", session_name_, "Session name (default: the trace's, else the file name)");

    summary_ = app.add_subcommand("summary", "Print the top-ops table, per-step breakdown and memory peaks");
    summary_->add_option("source", input_, "Session store, or a trace file (.json/.json.gz)")
        ->required()
        ->type_name("DB|TRACE");
    summary_session_ =
        summary_->add_option("--session", session_, "Session id of a store (default: the latest)")->type_name("N");
    summary_->add_option("--sort-by", summary_options_.sort_by, "Column to sort by (default: cpu_time_total)")
        ->check(CLI::IsMember(kSortKeys))
        ->type_name("KEY");
    summary_->add_option("--row-limit", summary_options_.row_limit, "Rows to print; -1 prints all (default: 100)")
        ->type_name("N");
    summary_->add_flag("--group-by-shape", summary_options_.group_by_shape, "One row per op and input shapes");
  }

  int execute(const GlobalOptions&) override {
    if (list_->parsed()) return list();
    if (export_->parsed()) return export_trace();
    if (import_->parsed()) return import_trace();
    if (summary_->parsed()) return summarise();
    fmt::print(stderr, "rtorch trace: give an action: list, export, import or summary (see rtorch trace --help)\n");
    return 2;
  }

 private:
  int list() {
    const rt::prof::Store store = open_existing_store(store_path_);
    const auto sessions = store.list_sessions();
    if (sessions.empty()) {
      fmt::print("{} has no sessions\n", store_path_);
      return 0;
    }
    fmt::print("{}", format_session_list(sessions));
    return 0;
  }

  int export_trace() {
    const bool chrome = format_ == "chrome" || (format_.empty() && plugin_id_.empty() && is_trace_file(output_));
    std::optional<rt::plugin::Manifest> exporter;
    if (!chrome) exporter = exporter_plugin(format_, plugin_id_, output_);  // fails before a long load
    LoadedSession loaded;
    {
      ProgressLine progress("import");
      loaded = load_store_or_trace(input_, given(export_session_, session_), progress.callback());
      progress.finish();
    }
    if (exporter) {
      const rt::plugin::TraceExport r = rt::plugin::export_with_plugin(*exporter, loaded.data, output_);
      fmt::print("exported {} to {} with {} (format {}): {} slices, {} bytes\n", loaded.origin, output_,
                 exporter->id, r.format, r.slices, r.bytes);
      return 0;
    }
    ProgressLine progress("export");
    const auto stats = rt::prof::export_chrome_trace(loaded.data, output_, {.progress = progress.callback()});
    progress.finish();
    fmt::print("exported {} to {}: {} events, {} bytes of JSON", loaded.origin, output_, stats.events, stats.bytes);
    if (stats.clamped_ops > 0) fmt::print(", {} slices clamped to nest in their parent", stats.clamped_ops);
    fmt::print("\n");
    return 0;
  }

  int import_trace() {
    const std::string store_path =
        import_store_->count() > 0 ? store_path_ : rt::prof::Store::default_path().string();
    std::error_code ec;
    if (!std::filesystem::exists(input_, ec)) {
      fmt::print(stderr, "rtorch trace import: '{}' does not exist; give the path of a Chrome trace (.json or "
                 ".json.gz) or of a file an importer plugin reads\n",
                 input_);
      return 1;
    }
    // Open the store first: a bad store fails before a long import.
    rt::prof::Store store = rt::prof::Store::open(store_path);
    std::optional<rt::plugin::Manifest> importer;
    if (!plugin_id_.empty()) {
      importer = importer_plugin(plugin_id_);
    } else if (!is_trace_file(input_)) {
      std::string tried;
      importer = detect_plugin_importer(input_, tried);
      if (!importer && !looks_like_chrome_trace(input_))
        throw rt::Error(fmt::format("'{}' is not a Chrome trace and no importer plugin recognises it ({}); give "
                                    "--plugin ID to choose one",
                                    input_, tried));
    }
    if (importer) return import_with_plugin(*importer, store, store_path);
    ProgressLine progress("import");
    rt::prof::ChromeImport imported = rt::prof::import_chrome_trace(input_, {.progress = progress.callback()});
    progress.finish();
    if (!session_name_.empty()) imported.session.name = session_name_;
    if (imported.session.name.empty()) imported.session.name = std::filesystem::path(input_).filename().string();
    imported.session.metadata["imported_from"] = std::filesystem::absolute(input_).string();
    const int64_t id = store.save_session(imported.session);
    const auto& r = imported.report;
    fmt::print("imported {} as session {} of {}\n", input_, id, store_path);
    fmt::print("events: {} read, {} skipped (unknown phase or category)\n", r.events, r.skipped);
    fmt::print("repairs: {} slices clamped into their parent, {} \"X\" without dur, {} with a negative duration, "
               "{} \"E\" without \"B\", {} \"B\" without \"E\"\n",
               r.clamped_slices, r.missing_dur, r.negative_dur, r.unmatched_end, r.unclosed_begin);
    return 0;
  }

  int import_with_plugin(const rt::plugin::Manifest& importer, rt::prof::Store& store, const std::string& store_path) {
    rt::plugin::TraceImport imported = rt::plugin::import_with_plugin(importer, input_);
    rt::prof::SessionData& session = imported.session;
    session.name = !session_name_.empty() ? session_name_ : std::filesystem::path(input_).filename().string();
    session.metadata["imported_from"] = std::filesystem::absolute(input_).string();
    session.metadata["importer"] = importer.id;
    session.metadata["format"] = imported.format;
    const int64_t id = store.save_session(session);
    fmt::print("imported {} as session {} of {}\n", input_, id, store_path);
    fmt::print("importer: {} {} (format {}), run out of process\n", importer.id, importer.version.str(),
               imported.format);
    fmt::print("slices: {} on {} threads\n", session.ops.size(), session.threads.size());
    return 0;
  }

  int summarise() {
    ProgressLine progress("import");
    const LoadedSession loaded = load_store_or_trace(input_, given(summary_session_, session_), progress.callback());
    progress.finish();
    const std::string name = loaded.data.name.empty() ? "" : fmt::format(" '{}'", loaded.data.name);
    fmt::print("{}{}{}\n\n", loaded.origin, name, loaded.data.complete ? "" : " (incomplete: still recording or cut short)");
    fmt::print("{}", format_summary(loaded.data, summary_options_));
    return 0;
  }

  CLI::App* list_ = nullptr;
  CLI::App* export_ = nullptr;
  CLI::App* import_ = nullptr;
  CLI::App* summary_ = nullptr;
  CLI::Option* export_session_ = nullptr;
  CLI::Option* summary_session_ = nullptr;
  CLI::Option* import_store_ = nullptr;
  std::string store_path_, input_, output_, session_name_, format_, plugin_id_;
  int64_t session_ = 0;
  SummaryOptions summary_options_;
};

}  // namespace

std::unique_ptr<Command> make_trace_command() { return std::make_unique<TraceCommand>(); }

}  // namespace rt::cli
