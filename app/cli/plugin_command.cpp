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

// Runs `rtorch plugin check DIR --child` and reads its findings (JSON lines on its stdout) until it exits or
// `timeout` passes. Whatever the child does, the parent reports it.
void run_child_checks(const fs::path& dir, std::chrono::seconds timeout, CheckRun& run) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ChildSpec spec;
  spec.argv = {fs::read_symlink("/proc/self/exe").string(), "plugin", "check", dir.string(), "--child"};
  spec.stdout_fd = out[1];
  spec.parent_death_signal = SIGKILL;
  pid_t pid = spawn_child(spec);
  close(out[1]);

  std::string buffer;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    int n = poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char chunk[4096];
    ssize_t got = read(out[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    buffer.append(chunk, size_t(got));
    if (buffer.size() > (8u << 20)) break;  // a child that floods is not trusted further
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
      Json j = Json::parse(buffer.substr(0, nl), nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || !j.contains("check") || !j["check"].is_string()) continue;
      std::string check = j["check"].get<std::string>();
      if (j.contains("running")) {
        run.running = check;
        continue;
      }
      bool ok = j.contains("ok") && j["ok"].is_boolean() && j["ok"].get<bool>();
      std::string detail = j.contains("detail") && j["detail"].is_string() ? j["detail"].get<std::string>() : "";
      run.findings.push_back({check, ok, detail});
      run.running.clear();
    }
  }
  close(out[0]);
  if (timed_out) {
    kill(pid, SIGKILL);
    wait_child(pid);
    run.findings.push_back({run.running.empty() ? "child" : run.running, false,
                            fmt::format("did not finish within {} s (raise it with --timeout)", timeout.count())});
    return;
  }
  ExitStatus st = wait_child(pid);
  for (const auto& c : rt::plugin::crashes_left_behind("rtorch-check"))
    if (c.pid == pid) rt::plugin::forget_crash(c);  // reported here; no later start needs to hear of it
  if (st.signaled)
    run.findings.push_back({run.running.empty() ? "child" : run.running, false,
                            fmt::format("the plugin crashed the checking process ({})", signal_name(st.code))});
  else if (st.code != 0 && st.code != 1)
    run.findings.push_back({run.running.empty() ? "child" : run.running, false,
                            fmt::format("the checking process exited with status {}", st.code)});
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
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ChildSpec spec;
  spec.argv = {studio.string(), "--check-plugin", dir.string()};
  spec.stdout_fd = out[1];
  spec.parent_death_signal = SIGKILL;
  pid_t pid = spawn_child(spec);
  close(out[1]);
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, int(std::min<int64_t>(left.count(), 1000))) <= 0) continue;
    char chunk[4096];
    ssize_t got = read(out[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || text.size() > (1u << 20)) break;
    text.append(chunk, size_t(got));
  }
  close(out[0]);
  ExitStatus st = wait_child(pid);
  std::string last;
  for (size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    std::string line = text.substr(pos, nl - pos);
    bool ok = line.rfind("  ok ", 0) == 0, failed = line.rfind("  FAIL ", 0) == 0;
    if (!ok && !failed) continue;
    std::string rest = line.substr(failed ? 7 : 5);
    size_t a = rest.find_first_not_of(' ');
    size_t b = a == std::string::npos ? std::string::npos : rest.find(' ', a);
    if (b == std::string::npos) continue;
    std::string check = rest.substr(a, b - a);
    if (check == "manifest") continue;  // the parent read it already
    size_t d = rest.find_first_not_of(' ', b);
    run.findings.push_back({check, ok, d == std::string::npos ? "" : rest.substr(d)});
    last = check;
  }
  if (st.signaled)
    run.findings.push_back({last.empty() ? "load" : "draw", false,
                            fmt::format("the panel crashed the studio's check ({})", signal_name(st.code))});
  else if (st.code != 0 && (run.findings.empty() || run.findings.back().ok))
    run.findings.push_back({"panel", false, fmt::format("rtorch-studio --check-plugin exited with status {}", st.code)});
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
    std::fprintf(out, "%s\n", Json{{"check", check}, {"running", true}}.dump().c_str());
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
