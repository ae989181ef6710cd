// `rtorch launch-rank [OPTIONS] -- SCRIPT [ARGS...]` (not listed in `rtorch --help`): one rank's
// supervisor. `rtorch launch` starts one per rank through mpirun; srun or mpirun may start it directly
// (docs/launch.md). It works out its rank (launch_placement.h), sets torchrun's environment, runs the
// script as `rtorch run [--store DB] SCRIPT ARGS` under supervision (launch_supervisor.h), writes its status file into
// $RT_LAUNCH_STATUS_DIR when that is set (launch_status.h) and exits with the script's status (128+signal
// when it was killed).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <signal.h>
#include <sys/prctl.h>

#include <cstdlib>
#include <cstdio>

#include "command.h"
#include "launch_placement.h"
#include "launch_status.h"
#include "launch_supervisor.h"

namespace rt::cli {
namespace {

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

class LaunchRankCommand final : public Command {
 public:
  std::string name() const override { return "launch-rank"; }
  std::string summary() const override { return "One rank's supervisor (started by rtorch launch, mpirun or srun)"; }

  void configure(CLI::App& app) override {
    app.group("");  // internal: hidden from `rtorch --help`
    app.add_option("--nproc-per-node,--nproc_per_node", request_.nproc_per_node, "Processes per node")
        ->check(CLI::PositiveNumber);
    app.add_option("--nnodes", request_.nnodes, "Number of nodes")->check(CLI::PositiveNumber);
    app.add_option("--node-rank,--node_rank", request_.node_rank, "This node's rank")->check(CLI::NonNegativeNumber);
    app.add_option("--master-addr,--master_addr", master_addr_, "MASTER_ADDR (default: $MASTER_ADDR or 127.0.0.1)");
    app.add_option("--master-port,--master_port", master_port_, "MASTER_PORT (default: $MASTER_PORT or 29500)")
        ->check(CLI::Range(0, 65535));
    app.add_option("--restart-count", restart_count_,
                   "TORCHELASTIC_RESTART_COUNT (default: $TORCHELASTIC_RESTART_COUNT or 0)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--max-restarts,--max_restarts", max_restarts_, "TORCHELASTIC_MAX_RESTARTS")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--monitor-interval,--monitor_interval", monitor_interval_,
                   "Seconds between checks of the script process while it is silent")
        ->check(CLI::PositiveNumber);
    app.add_flag("--no-prefix,--no_prefix", no_prefix_, "Do not tag output lines with [rank N]:");
    app.add_option("--store", store_, "Profile the script's run into this SQLite store (rtorch run --store)")
        ->type_name("DB.sqlite");
    app.add_flag("--profile-memory,!--no-profile-memory", profile_memory_,
                 "With --store: record allocations by category (default: on)");
    script_option_ = app.add_option("script", script_, "Python script; arguments after it go to the script");
  }

  bool takes_trailing_args() const override { return true; }
  void set_trailing_args(std::vector<std::string> args) override { args_ = std::move(args); }

  int execute(const GlobalOptions& global) override {
    if (script_option_->count() == 0) {
      fmt::print(stderr, "rtorch launch-rank: no script given (rtorch launch-rank [OPTIONS] -- SCRIPT [ARGS...])\n");
      return 2;
    }
    // When mpirun (or srun's step daemon) dies, this supervisor stops its script and reports.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    const RankPlacement p = resolve_placement(request_, [](const char* n) { return std::getenv(n); });
    const int restart_count = restart_count_ >= 0 ? restart_count_ : std::atoi(env_or("TORCHELASTIC_RESTART_COUNT", "0"));
    const std::string job_id =
        env_or("RT_LAUNCH_JOB_ID", env_or("SLURM_JOB_ID", env_or("OMPI_MCA_ess_base_jobid", "none")));
    set("RANK", std::to_string(p.rank));
    set("LOCAL_RANK", std::to_string(p.local_rank));
    set("WORLD_SIZE", std::to_string(p.world_size));
    set("LOCAL_WORLD_SIZE", std::to_string(p.local_world_size));
    set("GROUP_RANK", std::to_string(p.group_rank));
    set("GROUP_WORLD_SIZE", std::to_string(p.group_count));
    set("ROLE_RANK", std::to_string(p.rank));
    set("ROLE_WORLD_SIZE", std::to_string(p.world_size));
    set("MASTER_ADDR", master_addr_.empty() ? env_or("MASTER_ADDR", "127.0.0.1") : master_addr_);
    set("MASTER_PORT", master_port_ >= 0 ? std::to_string(master_port_) : env_or("MASTER_PORT", "29500"));
    set("TORCHELASTIC_RESTART_COUNT", std::to_string(restart_count));
    if (max_restarts_ >= 0) set("TORCHELASTIC_MAX_RESTARTS", std::to_string(max_restarts_));
    set("TORCHELASTIC_RUN_ID", job_id);
    set("RT_LAUNCH_JOB_ID", job_id);
    // Unbuffered, so that tagged lines appear as they are printed and a killed rank's last lines are kept.
    setenv("PYTHONUNBUFFERED", "1", 0);

    SupervisedRun run;
    run.argv.push_back(self_executable());
    if (global.threads > 0) {
      run.argv.push_back("--threads");
      run.argv.push_back(std::to_string(global.threads));
    }
    run.argv.push_back("run");
    if (!store_.empty()) {
      // `rtorch run` names the session after the rank and tags it with the job (profiled_run.h).
      run.argv.push_back("--store");
      run.argv.push_back(store_);
      run.argv.push_back(profile_memory_ ? "--profile-memory" : "--no-profile-memory");
    }
    run.argv.push_back(script_);
    run.argv.insert(run.argv.end(), args_.begin(), args_.end());
    run.prefix = no_prefix_ ? "" : fmt::format("[rank {}]: ", p.rank);
    run.poll_interval_s = monitor_interval_;
    std::fflush(stdout);
    const SupervisedResult r = supervise(run);

    if (const char* dir = std::getenv("RT_LAUNCH_STATUS_DIR"); dir && *dir) {
      RankStatus s;
      s.rank = p.rank;
      s.local_rank = p.local_rank;
      s.pid = r.pid;
      s.signaled = r.exit.signaled;
      s.code = r.exit.code;
      s.terminated_by = r.terminated_by;
      s.started_at = r.started_at;
      s.ended_at = r.ended_at;
      s.restart_count = restart_count;
      s.last_lines = r.last_lines;
      write_rank_status(dir, s);
    }
    return r.exit.shell_code();
  }

 private:
  PlacementRequest request_;
  std::string master_addr_;
  int master_port_ = -1;
  int restart_count_ = -1;
  int max_restarts_ = -1;
  double monitor_interval_ = 0.1;
  bool no_prefix_ = false;
  std::string store_;
  bool profile_memory_ = true;
  std::string script_;
  CLI::Option* script_option_ = nullptr;
  std::vector<std::string> args_;
};

}  // namespace

std::unique_ptr<Command> make_launch_rank_command() { return std::make_unique<LaunchRankCommand>(); }

}  // namespace rt::cli
