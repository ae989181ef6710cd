#include "launch_mpirun.h"

namespace rt::cli {

std::vector<std::string> mpirun_argv(const std::string& mpirun, const MpirunJob& job, bool as_root) {
  std::vector<std::string> argv = {mpirun, "-q", "-np", std::to_string(job.nprocs), "--oversubscribe", "--bind-to",
                                   "none"};
  if (as_root) argv.push_back("--allow-run-as-root");
  for (const std::string& name : job.exported_env) {
    argv.push_back("-x");
    argv.push_back(name);
  }
  argv.insert(argv.end(), job.rank_argv.begin(), job.rank_argv.end());
  return argv;
}

}  // namespace rt::cli
