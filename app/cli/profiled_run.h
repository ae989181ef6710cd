// app/cli/profiled_run.h — `rtorch run --profile/--store`: records a whole Python run in one
// profiler Session (the script's ops go through the same engine, DESIGN §2).
//
//   ProfileRequest request{.trace_path = "out.json", .store_path = "runs.sqlite", .name = "train.py"};
//   int code = run_profiled(request, [&] { return run_python_main(target); });
//
// Contracts: the session starts before the target runs (a store that cannot be opened, or a trace
// folder that does not exist, is reported and the target does not run: exit 1) and stops when the
// interpreter finalizes, whatever ends it: normal end, uncaught exception, sys.exit (which exits the
// process from inside the target), KeyboardInterrupt. Then the Chrome trace is written (trace_path
// non-empty) and the stored session is finished (store_path non-empty). The exit status is the
// target's, or 1 when the target succeeded but the trace or the store could not be written
// (reported on stderr). The script must not start its own profiler session (one per process).
#pragma once
#include <functional>
#include <string>

namespace rt::cli {

struct ProfileRequest {
  std::string trace_path;  // Chrome trace (.json or .json.gz); "" = none
  std::string store_path;  // SQLite store; "" = none
  std::string name;        // the session's name
  bool record_shapes = true;
  bool profile_memory = true;
};

int run_profiled(const ProfileRequest& request, const std::function<int()>& target);

}  // namespace rt::cli
