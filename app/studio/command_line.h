// app/studio/command_line.h — what `rtorch-studio` was asked to do.
//
//   rtorch-studio [NOTEBOOK.ipynb]                       open the window (on that notebook)
//   rtorch-studio --run-all NOTEBOOK.ipynb               open it and run every cell once the kernel is up
//   rtorch-studio --execute IN.ipynb --output OUT.ipynb [--allow-errors] [--timeout S]   headless run
//   rtorch-studio --render timeline|memory|scalars --session DB[:N]|DB:job=ID | --trace FILE --output PNG [--size WxH]
//   rtorch-studio [--safe-mode] [--noload ID]... [NOTEBOOK.ipynb]    plugins: none, or all but these
//   rtorch-studio --check-plugin DIR                     a panel plugin's checks, drawn offscreen (xvfb-run -a)
//   rtorch-studio --help | --version
//
//   StudioOptions options = parse_command_line(argc, argv);   // throws CommandLineExit for help/version/errors
//
// Every path in the result is absolute, resolved against the directory the studio started in, before any
// thread starts (the notebook's interpreter later runs cells in the notebook's folder).
//
// Test and benchmark hooks (documented in --help under "Testing"): --exit-after-shown prints the time to the
// first painted frame and quits (with --idle-ms N it first waits for the kernel to start and stay idle N ms, then
// prints the resident memory; with --run-all too, that is the memory after the whole notebook ran); --autosave-interval-ms sets the autosave period (default 30000). Parsing needs no
// Qt, so the headless path never touches a display.
#pragma once
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace rt::studio {

struct StudioOptions {
  std::string notebook;  // positional: a notebook to open in the window (empty: a new notebook)
  bool run_all = false;  // Run All once the kernel has started (needs a notebook)
  // Headless execution (--execute): no window, no display needed.
  std::string execute_input;
  std::string execute_output;  // default: overwrite the input, as `jupyter nbconvert --execute --inplace`;
                               // with --render, the PNG to write
  bool allow_errors = false;
  std::optional<double> timeout_seconds;  // per cell
  // Drawing one view of a profile into a PNG (--render): no window, but an OpenGL display (xvfb-run -a).
  std::string render_view;     // timeline | memory | scalars
  std::string render_session;  // DB or DB:N (a store and a session id; without N the newest), DB:job=ID (a job's ranks)
  std::string render_trace;    // a Chrome/Perfetto trace instead of a store
  std::string render_size = "1600x900";
  // Plugins (docs/plugins.md).
  bool safe_mode = false;          // load no plugin
  std::set<std::string> noload;    // plugin ids not to load
  std::string check_plugin;        // a panel plugin's folder to check (no window; needs OpenGL like --render)
  // Hooks.
  bool exit_after_shown = false;
  int idle_ms_before_exit = 0;  // with exit_after_shown: then wait for the kernel to be idle this long, report RSS
  int autosave_interval_ms = 30000;

  bool headless() const { return !execute_input.empty(); }
  bool render() const { return !render_view.empty(); }
  bool checks_plugin() const { return !check_plugin.empty(); }
};

// Thrown for --help, --version (exit_code 0, message on stdout) and usage errors (exit_code 2, message on stderr).
struct CommandLineExit : std::runtime_error {
  CommandLineExit(int code, const std::string& text) : std::runtime_error(text), exit_code(code) {}
  int exit_code;
};

StudioOptions parse_command_line(int argc, char** argv);

}  // namespace rt::studio
