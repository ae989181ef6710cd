// rt/plugin_host/crash_marker.h — naming the plugin that took the last run down.
//
// While plugin code runs for the first time (load, initialize, a panel's first frame) a marker file says which
// plugin and what it was doing; it is removed when that returns. A marker whose process is gone means that
// process died inside the plugin, and the next start can say so and offer to disable it:
//
//   for (const rt::plugin::CrashRecord& c : rt::plugin::crashes_left_behind("studio")) {
//     std::printf("the last run crashed in %s (%s)\n", c.plugin_id.c_str(), c.phase.c_str());
//     rt::plugin::forget_crash(c);
//   }
//   {
//     rt::plugin::CrashMarker marker("studio", "org.example.panel", "first draw");
//     panel->draw();      // a crash here leaves the marker for the next start
//   }                     // returned: the marker is gone
//
// Markers live in $RT_PLUGIN_STATE_DIR, else $XDG_STATE_HOME/rustytorch/crash-markers, else
// ~/.local/state/rustytorch/crash-markers; one file per process (<app>.<pid>), so ranks of one job and several
// studios never share one. Markers cost a file write and an unlink, which is why only first runs of plugin
// code are bracketed.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace rt::plugin {

struct CrashRecord {
  std::string app;        // "studio", "rtorch", "python"
  std::string plugin_id;
  std::string phase;      // "load", "initialize", "first draw", ...
  long pid = 0;
  std::filesystem::path file;
};

std::filesystem::path crash_marker_dir();

class CrashMarker {
 public:
  // Writes the marker (a failure to write is ignored: the marker is a diagnosis aid, never a reason to stop).
  CrashMarker(std::string app, const std::string& plugin_id, const std::string& phase);
  ~CrashMarker();  // removes it
  CrashMarker(const CrashMarker&) = delete;
  CrashMarker& operator=(const CrashMarker&) = delete;

 private:
  std::filesystem::path file_;
};

// Markers of `app` left by processes that no longer run (oldest first). Unreadable markers are skipped.
std::vector<CrashRecord> crashes_left_behind(const std::string& app);
// Deletes a record's marker once the user has been told.
void forget_crash(const CrashRecord& c);

// For a process whose job is to run plugin code for a parent that watches it (rtorch-trace-plugin, the child of
// `rtorch plugin check`): restores the default action of SIGSEGV, SIGBUS, SIGFPE and SIGILL, so that a crash in
// the plugin ends the process by that signal, which the parent names, even where a sanitizer runtime or an
// embedded interpreter installed handlers that would turn it into an ordinary exit status.
void restore_default_crash_signals();

}  // namespace rt::plugin
