// app/cli/launch_supervisor.h — runs one rank's script process and watches it until it ends: its output
// tagged and kept (launch_output.h), SIGINT/SIGTERM/SIGHUP forwarded to it, and it killed (SIGKILL, by
// PR_SET_PDEATHSIG) if the supervisor itself dies.
//
//   SupervisedResult r = supervise({{"/path/rtorch", "run", "train.py"}, "[rank 0]: ", 0.1, 20});
//   // r.exit.code == 0, r.last_lines == the script's last 20 lines (stdout and stderr, in arrival order)
//
// The script's environment is the supervisor's (set it before calling). Its stdout and stderr stay apart:
// tagged stdout goes to the supervisor's stdout, tagged stderr to its stderr. poll_interval_s is how long the
// supervisor waits for output before checking whether the script has ended (`--monitor-interval`).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "launch_process.h"

namespace rt::cli {

struct SupervisedRun {
  std::vector<std::string> argv;
  std::string prefix;  // "" writes the output untagged
  double poll_interval_s = 0.1;
  size_t tail_lines = 20;
};

struct SupervisedResult {
  pid_t pid = 0;
  ExitStatus exit;
  int terminated_by = 0;  // the last signal forwarded to the script, 0 when none
  double started_at = 0, ended_at = 0;
  std::vector<std::string> last_lines;
};

SupervisedResult supervise(const SupervisedRun& run);  // throws std::runtime_error when it cannot start

}  // namespace rt::cli
