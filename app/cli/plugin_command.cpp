// `rtorch plugin list|check|enable|disable`: the plugins this machine would load, and a plugin author's
// checks (docs/plugins.md, "Checking a plugin").
//
//   rtorch plugin list [--json]          every plugin found, its state, and where plugins are searched
//   rtorch plugin check DIR [--json]     the manifest, then loading in a child process: the ABI handshake,
//                                        initialize, the plugin's own self_test and the checks of its kinds
//   rtorch plugin disable ID | enable ID the user's settings (rt/plugin_host/plugin_settings.h)
//
// check loads the plugin in a child (`rtorch plugin check DIR --child`) so that a plugin that crashes or
// hangs is reported, with the check it was in, instead of taking the command down.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>

#include "command.h"
#include "launch_process.h"
#include "plugin_checks.h"
#include "rt/plugin_host/crash_marker.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/plugin_settings.h"

namespace rt::cli {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

std::string kinds_text(const rt::plugin::Manifest& m) {
  std::string s;
  for (rt::plugin::Kind k : m.kinds) s += (s.empty() ? "" : ",") + std::string(rt::plugin::kind_name(k));
  return s;
}

int list_plugins(bool json) {
  rt::plugin::PluginSettings settings;
  try {
    settings = rt::plugin::PluginSettings::load();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rtorch plugin list: {}\n", e.what());
  }
  rt::plugin::PluginManager pm(settings.manager_options());
  std::vector<fs::path> paths = rt::plugin::default_search_paths();
  pm.discover(paths);
  if (json) {
    for (const auto& r : pm.plugins()) {
      Json j{{"id", r.manifest.id},
             {"name", r.manifest.name},
             {"version", r.manifest.version.str()},
             {"kinds", kinds_text(r.manifest)},
             {"state", rt::plugin::state_name(r.state)},
             {"folder", r.manifest.folder().string()},
             {"error", r.error}};
      fmt::print("{}\n", j.dump());
    }
    return 0;
  }
  fmt::print("plugin folders searched, in order:\n");
  for (const fs::path& p : paths) {
    std::error_code ec;
    fmt::print("  {}{}\n", p.string(), fs::is_directory(p, ec) ? "" : "  (absent)");
  }
  if (pm.plugins().empty()) {
    fmt::print("no plugins found (a plugin is a folder with a plugin.json; see docs/plugins.md)\n");
    return 0;
  }
  fmt::print("\n{:<36} {:<9} {:<18} {:<9} {}\n", "ID", "VERSION", "KINDS", "STATE", "FOLDER");
  for (const auto& r : pm.plugins()) {
    // Listing reads manifests only; "found" means it would be loaded.
    const char* state = r.state == rt::plugin::PluginState::Found ? "enabled" : rt::plugin::state_name(r.state);
    fmt::print("{:<36} {:<9} {:<18} {:<9} {}\n", r.manifest.id, r.manifest.version.str(), kinds_text(r.manifest),
               state, r.manifest.folder().string());
    if (!r.error.empty()) fmt::print("    {}\n", r.error);
  }
  for (const char* app : {"studio", "rtorch"})
    for (const auto& c : rt::plugin::crashes_left_behind(app))
      fmt::print("\nnote: {} (pid {}) crashed in plugin {} during {}; `rtorch plugin disable {}` switches it off\n",
                 app, c.pid, c.plugin_id, c.phase, c.plugin_id);
  return 0;
}

// ---- check: the parent ----------------------------------------------------------------------------------

struct CheckRun {
  std::vector<CheckFinding> findings;
  std::string running;  // the check the child announced last, for a crash report
};

void print_finding(const CheckFinding& f, bool json) {
  if (json) {
    fmt::print("{}\n", Json{{"check", f.check}, {"ok", f.ok}, {"detail", f.detail}}.dump());
    return;
  }
  fmt::print("  {:<5} {:<26} {}\n", f.ok ? "ok" : "FAIL", f.check, f.detail);
}

// What a child printed, line by line, and how it ended.
struct ChildOutcome {
  bool timed_out = false;
  ExitStatus status;
};

// Runs `argv` with its stdout on a pipe and hands each line to `on_line` until the child exits, it writes more than
// 8 MiB (not trusted further), or `timeout` passes (then it is killed). Whatever the child does, the caller
// gets an outcome to report.
ChildOutcome run_child(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                       const std::function<void(const std::string&)>& on_line) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ChildSpec spec;
  spec.argv = argv;
  spec.stdout_fd = out[1];
  spec.parent_death_signal = SIGKILL;
  pid_t pid;
  try {
    pid = spawn_child(spec);
  } catch (...) {
    close(out[0]);
    close(out[1]);
    throw;
  }
  close(out[1]);

  ChildOutcome outcome;
  std::string buffer;
  size_t total = 0;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      outcome.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int n = poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (n <= 0) continue;  // timeout slice or EINTR
    char chunk[4096];
    ssize_t got = read(out[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    total += size_t(got);
    if (total > (8u << 20)) {
      kill(pid, SIGKILL);
      break;
    }
    buffer.append(chunk, size_t(got));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) on_line(buffer.substr(0, nl));
  }
  close(out[0]);
  outcome.status = wait_child(pid);
  return outcome;
}

// Adds what a child's end says when it did not end well: a crash (named by its signal), a timeout, or an exit
// status other than 0 (passed) and 1 (a check failed), against the check it was running.
void report_child_end(const ChildOutcome& o, std::chrono::seconds timeout, const std::string& running, CheckRun& run) {
  std::string check = running.empty() ? "child" : running;
  if (o.timed_out)
    run.findings.push_back({check, false, fmt::format("did not finish within {} s (raise it with --timeout)",
                                                      timeout.count())});
  else if (o.status.signaled)
    run.findings.push_back({check, false, fmt::format("the plugin crashed the checking process ({})",
                                                      signal_name(o.status.code))});
  else if (o.status.code != 0 && (o.status.code != 1 || run.findings.empty() || run.findings.back().ok))
    run.findings.push_back({check, false, fmt::format("the checking process exited with status {}", o.status.code)});
}

// Runs `rtorch plugin check DIR --child` and reads its findings (JSON lines on its stdout).
void run_child_checks(const fs::path& dir, std::chrono::seconds timeout, CheckRun& run) {
  pid_t child_pid = 0;
  ChildOutcome o = run_child(
      {fs::read_symlink("/proc/self/exe").string(), "plugin", "check", dir.string(), "--child"}, timeout,
      [&](const std::string& line) {
        Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("check") || !j["check"].is_string()) return;
        std::string check = j["check"].get<std::string>();
        if (j.contains("pid") && j["pid"].is_number_integer()) child_pid = pid_t(j["pid"].get<int64_t>());
        if (j.contains("running")) {
          run.running = check;
          return;
        }
        bool ok = j.contains("ok") && j["ok"].is_boolean() && j["ok"].get<bool>();
        std::string detail = j.contains("detail") && j["detail"].is_string() ? j["detail"].get<std::string>() : "";
        run.findings.push_back({check, ok, detail});
        run.running.clear();
      });
  // The crash was reported here; no later start needs to hear of the child's crash marker.
  for (const auto& c : rt::plugin::crashes_left_behind("rtorch-check"))
    if (child_pid == 0 || c.pid == child_pid) rt::plugin::forget_crash(c);
  report_child_end(o, timeout, run.running, run);
}

// Panels need Dear ImGui and OpenGL, which the studio has: `rtorch-studio --check-plugin DIR` (beside this
// executable) runs their checks and prints "  ok    check   detail" lines, read back here as findings.
void run_studio_checks(const fs::path& dir, std::chrono::seconds timeout, CheckRun& run) {
  fs::path studio = fs::read_symlink("/proc/self/exe").parent_path() / "rtorch-studio";
  std::error_code ec;
  if (!fs::exists(studio, ec)) {
    run.findings.push_back({"panel", false, fmt::format("panels are checked by the studio, and {} does not exist; "
                                                        "build it (scripts/build.sh rtorch-studio)",
                                                        studio.string())});
    return;
  }
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) {
    run.findings.push_back({"panel", false, "a panel is drawn with OpenGL to check it, and there is no display: "
                                            "xvfb-run -a rtorch plugin check DIR"});
    return;
  }
  std::string last = "load";
  ChildOutcome o = run_child({studio.string(), "--check-plugin", dir.string()}, timeout, [&](const std::string& line) {
    bool ok = line.rfind("  ok ", 0) == 0, failed = line.rfind("  FAIL ", 0) == 0;
    if (!ok && !failed) return;
    std::string rest = line.substr(failed ? 7 : 5);
    size_t a = rest.find_first_not_of(' ');
    size_t b = a == std::string::npos ? std::string::npos : rest.find(' ', a);
    if (b == std::string::npos) return;
    std::string check = rest.substr(a, b - a);
    if (check == "manifest") return;  // the parent read it already
    size_t d = rest.find_first_not_of(' ', b);
    run.findings.push_back({check, ok, d == std::string::npos ? "" : rest.substr(d)});
    last = check == "initialize" ? "draw" : check;
  });
  report_child_end(o, timeout, last, run);
}

int check_plugin(const fs::path& dir, bool json, std::chrono::seconds timeout) {
  CheckRun run;
  rt::plugin::Manifest manifest;
  try {
    manifest = rt::plugin::read_manifest(dir / "plugin.json");
    run.findings.push_back({"manifest", true, fmt::format("{} {} ({})", manifest.id, manifest.version.str(),
                                                          kinds_text(manifest))});
  } catch (const std::exception& e) {
    run.findings.push_back({"manifest", false, e.what()});
  }
  if (!json) fmt::print("checking {}\n", dir.string());
  if (!json) print_finding(run.findings.back(), false);
  if (!run.findings.back().ok) {
    if (json) print_finding(run.findings.back(), true);
    return 1;
  }
  size_t printed = run.findings.size();
  try {
    if (manifest.has_kind(rt::plugin::Kind::Panel))
      run_studio_checks(dir, timeout, run);
    else
      run_child_checks(dir, timeout, run);
  } catch (const std::exception& e) {
    run.findings.push_back({"child", false, e.what()});
  }
  if (json) printed = 0;
  int failed = 0;
  for (size_t i = 0; i < run.findings.size(); ++i) {
    if (!run.findings[i].ok) ++failed;
    if (i >= printed) print_finding(run.findings[i], json);
  }
  if (!json) {
    if (failed)
      fmt::print("{} of {} checks failed\n", failed, run.findings.size());
    else
      fmt::print("all {} checks passed\n", run.findings.size());
  }
  return failed ? 1 : 0;
}

// ---- check: the child ------------------------------------------------------------------------------------

int check_in_child(const fs::path& dir) {
  rt::plugin::restore_default_crash_signals();  // a crash in the plugin ends us by its signal, for the parent
  // Findings go to the pipe on our stdout; whatever the plugin prints goes to stderr instead.
  int report = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  FILE* out = fdopen(report, "w");
  if (!out) return 3;
  auto announce = [&](const std::string& check) {
    std::fprintf(out, "%s\n", Json{{"check", check}, {"running", true}, {"pid", int64_t(getpid())}}.dump().c_str());
    std::fflush(out);
  };
  auto emit = [&](const CheckFinding& f) {
    std::fprintf(out, "%s\n", Json{{"check", f.check}, {"ok", f.ok}, {"detail", f.detail}}.dump().c_str());
    std::fflush(out);
  };
  std::vector<CheckFinding> all = run_plugin_checks(dir, announce, emit);
  bool failed = false;
  for (const auto& f : all) failed = failed || !f.ok;
  std::fclose(out);
  return failed ? 1 : 0;
}

class PluginCommand final : public Command {
 public:
  std::string name() const override { return "plugin"; }
  std::string summary() const override { return "List plugins, check one, enable or disable them"; }
  void configure(CLI::App& app) override {
    app.require_subcommand(1);
    auto* list = app.add_subcommand("list", "The plugins found, their state, and the folders searched");
    list->add_flag("--json", json_, "One JSON object per plugin, one per line");
    list->callback([this] { action_ = Action::List; });

    auto* check = app.add_subcommand("check", "Check a plugin folder: manifest, loading, ABI, self-tests");
    check->add_option("DIR", dir_, "The plugin's folder (with its plugin.json)")->required();
    check->add_flag("--json", json_, "One JSON object per check, one per line");
    check->add_option("--timeout", timeout_s_, "Seconds the checks may take")->check(CLI::Range(1, 3600));
    check->add_flag("--child", child_, "Internal: run the checks in this process")->group("");
    check->callback([this] { action_ = Action::Check; });

    auto* disable = app.add_subcommand("disable", "Do not load a plugin from now on (kept in your settings)");
    disable->add_option("ID", id_, "The plugin's id")->required();
    disable->callback([this] { action_ = Action::Disable; });
    auto* enable = app.add_subcommand("enable", "Load a plugin again, or one that is off by default");
    enable->add_option("ID", id_, "The plugin's id")->required();
    enable->callback([this] { action_ = Action::Enable; });
    app.footer("Plugins are searched in the install's plugin folder, ~/.local/share/rustytorch/plugins and\n"
               "$RT_PLUGIN_PATH; docs/plugins.md explains how to write one.");
  }

  int execute(const GlobalOptions&) override {
    try {
      switch (action_) {
        case Action::List: return list_plugins(json_);
        case Action::Check: return child_ ? check_in_child(dir_) : check_plugin(dir_, json_, std::chrono::seconds(timeout_s_));
        case Action::Disable:
        case Action::Enable: {
          auto s = rt::plugin::PluginSettings::load();
          if (action_ == Action::Disable) s.disable(id_); else s.enable(id_);
          s.save();
          fmt::print("{} {} (in {})\n", action_ == Action::Disable ? "disabled" : "enabled", id_,
                     rt::plugin::PluginSettings::file().string());
          return 0;
        }
        case Action::None: break;
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch plugin: {}\n", e.what());
      return 1;
    }
    return 2;
  }

 private:
  enum class Action { None, List, Check, Disable, Enable } action_ = Action::None;
  bool json_ = false;
  bool child_ = false;
  int timeout_s_ = 120;
  fs::path dir_;
  std::string id_;
};

}  // namespace

std::unique_ptr<Command> make_plugin_command() { return std::make_unique<PluginCommand>(); }

}  // namespace rt::cli
