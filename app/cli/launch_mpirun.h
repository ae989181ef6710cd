// app/cli/launch_mpirun.h — the mpirun command line that starts one `rtorch launch-rank` per local rank.
//
//   MpirunJob job{4, {"RT_LAUNCH_JOB_ID", "RT_LAUNCH_STATUS_DIR"}, {"/path/rtorch", "launch-rank", ...}};
//   std::vector<std::string> argv = mpirun_argv("/usr/bin/mpirun", job, getuid() == 0);
//   // /usr/bin/mpirun -q -np 4 --oversubscribe --bind-to none [--allow-run-as-root]
//   //                 -x RT_LAUNCH_JOB_ID -x RT_LAUNCH_STATUS_DIR /path/rtorch launch-rank ...
//
// -q drops mpirun's own banner when a rank fails (the launcher prints its own summary); --bind-to none
// leaves each rank free to use every core (mpirun would pin each process to one core or socket);
// --oversubscribe allows more ranks than cores. mpirun ends every other rank when one exits non-zero.
#pragma once
#include <string>
#include <vector>

namespace rt::cli {

struct MpirunJob {
  int nprocs = 1;
  std::vector<std::string> exported_env;  // names passed with -x (values come from the launcher's environment)
  std::vector<std::string> rank_argv;     // the program each rank runs, with its arguments
};

std::vector<std::string> mpirun_argv(const std::string& mpirun, const MpirunJob& job, bool as_root);

}  // namespace rt::cli
