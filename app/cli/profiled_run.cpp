#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "profiled_run.h"

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include "rt/prof/chrome_trace.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"

namespace rt::cli {
namespace {

// Note [Finishing on sys.exit]
// Py_RunMain does not return on SystemExit: it finalizes the interpreter and calls exit() itself.
// So the profile is finished by a Py_AtExit function, which runs at the end of Py_FinalizeEx on every
// path (normal end, exception, sys.exit) while the engine is still intact. Py_AtExit needs an
// initialized runtime, so it is registered from an audit hook (installable before Py_Initialize) on
// the first audit event. finish() runs at most once; run_profiled calls it again after a normal
// return in case the interpreter never started. When finishing fails on the exit() path, an atexit
// handler turns a zero status into 1.
struct ProfiledRun {
  const ProfileRequest& request;
  rt::prof::Session session;
  bool finished = false;
  bool failed = false;
  bool returned = false;

  void finish();
};

ProfiledRun* active_run = nullptr;

void ProfiledRun::finish() {
  if (finished) return;
  finished = true;
  std::fflush(stdout);
  try {
    session.stop();
  } catch (const std::exception& e) {
    // The session is stopped all the same; the trace below still holds everything recorded.
    fmt::print(stderr, "rtorch run: the profile store was not completed: {}\n", e.what());
    failed = true;
  }
  if (!request.trace_path.empty()) {
    try {
      const auto stats = rt::prof::export_chrome_trace(session.data(), request.trace_path);
      fmt::print(stderr, "rtorch run: wrote {} ({} events)\n", request.trace_path, stats.events);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch run: cannot write the trace: {}\n", e.what());
      failed = true;
    }
  }
  if (!request.store_path.empty() && !failed)
    fmt::print(stderr, "rtorch run: stored session {} in {}\n", session.store_session_id(), request.store_path);
  std::fflush(stderr);
}

void finish_at_python_exit() {
  if (active_run) active_run->finish();
}

void fail_exit_status() {
  if (active_run && active_run->failed && !active_run->returned) std::_Exit(1);
}

int register_finish_on_first_event(const char*, PyObject*, void*) {
  static bool registered = false;
  if (!registered) {
    registered = true;
    if (Py_AtExit(finish_at_python_exit) != 0)
      fmt::print(stderr, "rtorch run: cannot register the profile's exit handler; a sys.exit() would lose it\n");
  }
  return 0;
}

// A long run must not end in a trace that cannot be written: check the folder before it starts.
bool trace_folder_exists(const std::string& trace_path) {
  if (trace_path.empty()) return true;
  const std::filesystem::path folder = std::filesystem::absolute(trace_path).parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(folder, ec)) return true;
  fmt::print(stderr, "rtorch run: cannot write the trace {}: folder '{}' does not exist; create it or choose "
             "another --profile path\n", trace_path, folder.string());
  return false;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool is_count(const char* s) {
  if (!s) return false;
  for (const char* p = s; *p; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

}  // namespace

bool label_launched_rank(ProfileRequest& request) {
  const char* job = env("RT_LAUNCH_JOB_ID");
  const char* rank = env("RANK");
  const char* world = env("WORLD_SIZE");
  if (!job || !rank || !world) return false;
  if (!is_count(rank) || !is_count(world)) {
    fmt::print(stderr, "rtorch run: RANK='{}' and WORLD_SIZE='{}' are not both numbers; the profile is not "
               "labelled with its rank\n", rank, world);
    return false;
  }
  const std::string script = std::filesystem::path(request.name).filename().string();
  request.name = fmt::format("rank {} of {} \u00b7 {}", rank, world, script.empty() ? request.name : script);
  request.metadata["job_id"] = job;
  request.metadata["rank"] = rank;
  request.metadata["world_size"] = world;
  if (const char* local = env("LOCAL_RANK")) request.metadata["local_rank"] = local;
  const char* restart = env("TORCHELASTIC_RESTART_COUNT");
  request.metadata["restart_count"] = restart && is_count(restart) ? restart : "0";
  return true;
}

int run_profiled(const ProfileRequest& request, const std::function<int()>& target) {
  if (active_run) throw std::logic_error("run_profiled: a profiled run is already in progress");
  if (!trace_folder_exists(request.trace_path)) return 1;
  rt::prof::SessionOptions options;
  options.record_shapes = request.record_shapes;
  options.profile_memory = request.profile_memory;
  options.name = request.name;
  options.store_path = request.store_path;
  options.metadata = request.metadata;
  ProfiledRun run{request, rt::prof::Session(options)};
  try {
    run.session.start();
  } catch (const std::exception& e) {
    fmt::print(stderr, "rtorch run: cannot start profiling: {}\n", e.what());
    return 1;
  }
  active_run = &run;
  PySys_AddAuditHook(register_finish_on_first_event, nullptr);
  std::atexit(fail_exit_status);

  const int exit_code = target();
  run.finish();
  run.returned = true;
  active_run = nullptr;
  return exit_code != 0 ? exit_code : (run.failed ? 1 : 0);
}

}  // namespace rt::cli
