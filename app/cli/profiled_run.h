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
// Several processes may record into one store at once (each rank of `rtorch launch --store`): each has its
// own session and connection; SQLite's WAL and the store's busy timeout serialize their commits.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>

namespace rt::cli {

struct ProfileRequest {
  std::string trace_path;  // Chrome trace (.json or .json.gz); "" = none
  std::string store_path;  // SQLite store; "" = none
  std::string name;        // the session's name
  bool record_shapes = true;
  bool profile_memory = true;
  std::unordered_map<std::string, std::string> metadata;  // extra session metadata (SessionOptions::metadata)
};

// Under `rtorch launch` (its rank supervisor sets RT_LAUNCH_JOB_ID, RANK and WORLD_SIZE), names the session
// "rank R of W · NAME" and adds the metadata that groups a job's sessions (rt/prof/rank_merge.h): job_id, rank,
// world_size, local_rank, restart_count (TORCHELASTIC_RESTART_COUNT). Elsewhere it changes nothing. Returns
// whether it did; a RANK or WORLD_SIZE that is not a number is reported on stderr and ignored.
bool label_launched_rank(ProfileRequest& request);

int run_profiled(const ProfileRequest& request, const std::function<int()>& target);

}  // namespace rt::cli
