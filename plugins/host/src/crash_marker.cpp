// Note [Crash markers]
// A marker is written before plugin code first runs and removed after it returns. Only a process that dies
// in between leaves one behind, so a marker whose pid no longer runs (or runs a different process: the start
// time in /proc/<pid>/stat differs) names the plugin that crashed it. Writing without fsync is enough: a
// crashing process loses nothing it wrote, only a power cut would.
#include "rt/plugin_host/crash_marker.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

namespace rt::plugin {
namespace {

// Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot; "" when unknown.
std::string process_start_time(long pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return {};
  size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return field;
  return {};
}

bool process_still_runs(long pid, const std::string& start_time) {
  if (pid <= 0) return false;
  if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  return start_time.empty() || process_start_time(pid) == start_time;
}

bool safe_app_name(const std::string& app) {
  return !app.empty() && app.size() <= 32 &&
         std::all_of(app.begin(), app.end(), [](char c) { return std::isalnum((unsigned char)c) || c == '-'; });
}

}  // namespace

std::filesystem::path crash_marker_dir() {
  if (const char* d = std::getenv("RT_PLUGIN_STATE_DIR"); d && *d) return std::filesystem::path(d);
  if (const char* d = std::getenv("XDG_STATE_HOME"); d && *d)
    return std::filesystem::path(d) / "rustytorch" / "crash-markers";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".local" / "state" / "rustytorch" / "crash-markers";
}

CrashMarker::CrashMarker(std::string app, const std::string& plugin_id, const std::string& phase) {
  if (!safe_app_name(app)) app = "app";
  long pid = long(::getpid());
  std::error_code ec;
  std::filesystem::path dir = crash_marker_dir();
  std::filesystem::create_directories(dir, ec);
  if (ec) return;
  nlohmann::json j = {{"app", app}, {"plugin", plugin_id}, {"phase", phase}, {"pid", pid},
                      {"start_time", process_start_time(pid)}};
  std::filesystem::path file = dir / fmt::format("{}.{}", app, pid);
  std::ofstream out(file, std::ios::trunc);
  if (!(out << j.dump() << '\n')) return;
  out.close();
  file_ = std::move(file);
}

CrashMarker::~CrashMarker() {
  if (file_.empty()) return;
  std::error_code ec;
  std::filesystem::remove(file_, ec);
}

std::vector<CrashRecord> crashes_left_behind(const std::string& app) {
  std::vector<std::pair<std::filesystem::file_time_type, CrashRecord>> found;
  std::error_code ec;
  std::filesystem::directory_iterator it(crash_marker_dir(), ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    std::string name = p.filename().string();
    if (name.rfind(app + ".", 0) != 0 || !it->is_regular_file(ec)) continue;
    std::ifstream in(p);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("plugin") || !j["plugin"].is_string() || !j.contains("pid") ||
        !j["pid"].is_number_integer())
      continue;
    CrashRecord r;
    r.app = app;
    r.plugin_id = j["plugin"].get<std::string>();
    r.phase = j.value("phase", std::string("?"));
    r.pid = j["pid"].get<long>();
    r.file = p;
    std::string start = j.value("start_time", std::string());
    if (r.pid == long(::getpid()) || process_still_runs(r.pid, start)) continue;
    found.emplace_back(it->last_write_time(ec), std::move(r));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CrashRecord> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

void restore_default_crash_signals() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
}

void forget_crash(const CrashRecord& c) {
  std::error_code ec;
  std::filesystem::remove(c.file, ec);
}

}  // namespace rt::plugin
