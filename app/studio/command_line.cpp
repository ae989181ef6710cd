#include "command_line.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <sstream>

namespace rt::studio {
namespace {

// Paths from the command line are made absolute while parsing, before any thread starts: the
// notebook's interpreter runs cells in the notebook's folder (os.chdir, process-wide), so a relative
// path resolved later on the GUI thread would be resolved against that folder instead.
std::string absolute(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
}

// --session DB[:N] or DB:job=ID: only the store's path is a path.
std::string absolute_session(const std::string& spec) {
  if (const auto job = spec.rfind(":job="); job != std::string::npos && job > 0)
    return absolute(spec.substr(0, job)) + spec.substr(job);
  const auto colon = spec.rfind(':');
  const bool has_id = colon != std::string::npos && colon + 1 < spec.size() &&
                      spec.find_first_not_of("0123456789", colon + 1) == std::string::npos;
  return has_id ? absolute(spec.substr(0, colon)) + spec.substr(colon) : absolute(spec);
}

}  // namespace

StudioOptions parse_command_line(int argc, char** argv) {
  StudioOptions options;
  CLI::App app{"rtorch-studio — the RustyTorch++ notebook studio: .ipynb notebooks on an embedded Python kernel.",
               "rtorch-studio"};
  app.set_version_flag("--version", std::string("rtorch-studio ") + RT_VERSION);
  app.add_option("notebook", options.notebook, "notebook to open (.ipynb); without one the studio starts empty")
      ->type_name("NOTEBOOK");
  CLI::Option* execute =
      app.add_option("--execute", options.execute_input,
                     "run every cell of IN.ipynb without a window (like jupyter nbconvert --execute); exits 1 "
                     "when a cell raises, unless --allow-errors")
          ->type_name("IN.ipynb")
          ->group("Headless");
  CLI::Option* render =
      app.add_option("--render", options.render_view,
                     "draw one view of a profiling session into a PNG without a window: timeline, memory, scalars "
                     "or graph (the autograd graph of its latest backward, with per-op time and memory) (needs an OpenGL display: xvfb-run -a rtorch-studio --render ...)")
          ->type_name("VIEW")
          ->check(CLI::IsMember({"timeline", "memory", "scalars", "graph"}))
          ->group("Headless");
  CLI::Option* output =
      app.add_option("--output", options.execute_output,
                     "where --execute writes the executed notebook (default: IN), or the PNG --render draws")
          ->type_name("OUT")
          ->group("Headless");
  CLI::Option* session = app.add_option("--session", options.render_session,
                                        "with --render: a profiler store and session id (DB:N; DB alone: its newest), or "
                                        "DB:job=ID for every rank of a job recorded by rtorch launch --store, side by side")
                             ->type_name("DB[:N]|DB:job=ID")
                             ->needs(render)
                             ->group("Headless");
  app.add_option("--trace", options.render_trace, "with --render: a Chrome/Perfetto trace (.json, .json.gz)")
      ->type_name("FILE")
      ->needs(render)
      ->excludes(session)
      ->group("Headless");
  app.add_option("--size", options.render_size, "with --render: image size in pixels (default 1600x900)")
      ->type_name("WxH")
      ->needs(render)
      ->group("Headless");
  app.add_flag("--allow-errors", options.allow_errors,
               "keep running after a cell raises and exit 0; the error is saved in the cell's outputs")
      ->needs(execute)
      ->group("Headless");
  app.add_option("--timeout", options.timeout_seconds,
                 "seconds one cell may run before it is interrupted (a timeout is an error; default: none)")
      ->type_name("S")
      ->check(CLI::PositiveNumber)
      ->needs(execute)
      ->group("Headless");
  app.add_flag("--run-all", options.run_all, "run every cell of NOTEBOOK once the kernel has started");
  app.add_flag("--safe-mode", options.safe_mode, "start without loading any plugin")->group("Plugins");
  app.add_option("--noload", options.noload, "do not load the plugin with this id (repeatable)")
      ->type_name("ID")
      ->group("Plugins");
  app.add_option("--check-plugin", options.check_plugin,
                 "check a panel plugin's folder: load it, draw frames offscreen, report (needs OpenGL: xvfb-run -a)")
      ->type_name("DIR")
      ->group("Plugins");
  app.add_flag("--exit-after-shown", options.exit_after_shown,
               "print the time from process start to the first painted window, then quit (benchmarks)")
      ->group("Testing");
  app.add_option("--idle-ms", options.idle_ms_before_exit,
                 "with --exit-after-shown: wait until the kernel is idle, stay N ms, print the resident memory")
      ->needs("--exit-after-shown")
      ->check(CLI::NonNegativeNumber)
      ->type_name("N")
      ->group("Testing");
  app.add_option("--autosave-interval-ms", options.autosave_interval_ms,
                 "autosave period in milliseconds (default 30000)")
      ->type_name("MS")
      ->check(CLI::Range(50, 24 * 3600 * 1000))
      ->group("Testing");
  app.get_formatter()->column_width(28);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    if (code == 0) throw CommandLineExit(0, out.str());
    throw CommandLineExit(2, err.str() + "Run 'rtorch-studio --help' for usage.\n");
  }
  if (!options.execute_input.empty() && !options.notebook.empty())
    throw CommandLineExit(2, "rtorch-studio: give either a notebook to open or --execute IN.ipynb, not both\n"
                             "Run 'rtorch-studio --help' for usage.\n");
  auto usage_error = [](const std::string& what) {
    return CommandLineExit(2, "rtorch-studio: " + what + "\nRun 'rtorch-studio --help' for usage.\n");
  };
  if (output->count() > 0 && options.execute_input.empty() && options.render_view.empty())
    throw usage_error("--output goes with --execute IN.ipynb or --render VIEW");
  if (!options.render_view.empty()) {
    if (!options.execute_input.empty() || !options.notebook.empty())
      throw usage_error("--render draws a profile; it takes no notebook and no --execute");
    if (options.render_session.empty() && options.render_trace.empty())
      throw usage_error("--render needs a profile: --session DB[:N] (a store; `rtorch trace list DB` lists it) or "
                        "--trace FILE");
    if (options.execute_output.empty()) throw usage_error("--render needs --output PNG");
  }
  if (options.run_all && options.notebook.empty())
    throw CommandLineExit(2, "rtorch-studio: --run-all needs a notebook to run: rtorch-studio --run-all NOTEBOOK.ipynb\n"
                             "(for a run without a window use --execute IN.ipynb --output OUT.ipynb)\n");
  if (!options.check_plugin.empty() && (!options.notebook.empty() || !options.execute_input.empty() ||
                                        !options.render_view.empty()))
    throw usage_error("--check-plugin DIR checks a plugin; it takes no notebook, --execute or --render");
  for (std::string* path : {&options.notebook, &options.execute_input, &options.execute_output, &options.render_trace,
                            &options.check_plugin})
    *path = absolute(*path);
  options.render_session = absolute_session(options.render_session);
  return options;
}

}  // namespace rt::studio
