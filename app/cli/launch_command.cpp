// `rtorch launch --nproc-per-node N [--nnodes M --node-rank R --master-addr A --master-port P]
// [--max-restarts K] [--monitor-interval S] [--no-prefix] SCRIPT [ARGS...]`: torchrun's interface over
// Open MPI's mpirun (docs/launch.md). mpirun starts one `rtorch launch-rank` supervisor per local rank
// (launch_rank_command.cpp); when a rank fails, mpirun stops the others, this command reads the ranks' status
// files (launch_status.h), prints the first failure (launch_report.h) and relaunches every rank while
// restarts remain, with TORCHELASTIC_RESTART_COUNT incremented.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "command.h"
#include "launch_mpirun.h"
#include "launch_process.h"
#include "launch_report.h"
#include "launch_status.h"
#include "rt/prof/store.h"

namespace rt::cli {
namespace {

constexpr int kUsageError = 2;

std::string new_job_id() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

class LaunchCommand final : public Command {
 public:
  std::string name() const override { return "launch"; }
  std::string summary() const override {
    return "Run a script as N data-parallel processes with torchrun's environment (over mpirun)";
  }

  void configure(CLI::App& app) override {
    app.add_option("--nproc-per-node,--nproc_per_node", nproc_per_node_, "Processes (ranks) to start on this node (default 1)")
        ->type_name("N");
    app.add_option("--nnodes", nnodes_, "Number of nodes in the job (default 1)")->type_name("M");
    app.add_option("--node-rank,--node_rank", node_rank_, "This node's rank, 0 to M-1 (default 0)")->type_name("R");
    app.add_option("--master-addr,--master_addr", master_addr_, "Address of rank 0's node (default 127.0.0.1)")
        ->type_name("ADDR");
    app.add_option("--master-port,--master_port", master_port_, "Port on rank 0's node (default 29500)")
        ->type_name("PORT");
    app.add_option("--max-restarts,--max_restarts", max_restarts_,
                   "Relaunch every rank up to K times after a rank fails (default 0)")
        ->type_name("K");
    app.add_option("--monitor-interval,--monitor_interval", monitor_interval_,
                   "Seconds between a rank supervisor's checks of its silent script process (default 0.1)")
        ->type_name("S");
    app.add_flag("--no-prefix,--no_prefix", no_prefix_, "Do not tag each output line with [rank N]:");
    app.add_flag("--attach", attach_,
                 "Make every rank attachable by the studio and `rtorch attach JOB` (sets RT_ATTACH=1 for the ranks)");
    app.add_option("--listen", listen_,
                   "With --attach (implied): each rank also accepts TCP there, at PORT + its LOCAL_RANK; off loopback "
                   "clients need the token of its connection file (docs/remote-attach.md)")
        ->type_name("[ADDR:]PORT");
    app.add_option("--listen-auth", listen_auth_, "auto (tokens off loopback), token (always) or none (loopback only)")
        ->check(CLI::IsMember({"auto", "token", "none"}));
    app.add_option("--store", store_,
                   "Profile every rank's whole run into this SQLite store, one session per rank "
                   "(\"rank 0 of 2 \u00b7 train.py\", grouped by job id)")
        ->type_name("DB.sqlite");
    app.add_flag("--profile-memory,!--no-profile-memory", profile_memory_,
                 "With --store: record allocations by category (default: on)");
    script_option_ = app.add_option("script", script_, "Python script each rank runs; arguments after it go to it");
    app.footer(
        "Every rank runs `rtorch run SCRIPT ARGS` with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,\n"
        "GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RESTART_COUNT and RT_LAUNCH_JOB_ID set, so\n"
        "init_process_group(init_method=\"env://\") works. Options go before SCRIPT (torchrun's underscore\n"
        "spellings such as --nproc_per_node are accepted). When a rank fails, the others are stopped, the first\n"
        "failure is reported and, while restarts remain, all ranks are started again. Exit status: 0, or the\n"
        "first failure's exit code (128+signal when killed). See docs/launch.md (Slurm, multi-node, limits).");
  }

  bool takes_trailing_args() const override { return true; }
  void set_trailing_args(std::vector<std::string> args) override { args_ = std::move(args); }

  int execute(const GlobalOptions& global) override {
    if (const int bad = check_arguments(); bad != 0) return bad;
    const std::string mpirun = find_on_path("mpirun");
    if (mpirun.empty()) {
      fmt::print(stderr, "rtorch launch: mpirun not found on PATH; install Open MPI (Debian: openmpi-bin)\n");
      return 1;
    }
    if (!store_.empty()) {
      // Every rank writes into one store: create (or migrate) it once here, before they start, and stop
      // early with the store's own message when it cannot be opened. Ranks may run in another folder.
      store_ = std::filesystem::absolute(store_).string();
      try {
        rt::prof::Store::open(store_).build_query_indexes();
      } catch (const std::exception& e) {
        fmt::print(stderr, "rtorch launch: cannot use --store: {}\n", e.what());
        return 1;
      }
    }
    const char* given_id = std::getenv("RT_LAUNCH_JOB_ID");
    const std::string job_id = given_id && *given_id ? given_id : new_job_id();
    const std::filesystem::path job_dir = make_job_dir(job_id);
    setenv("RT_LAUNCH_JOB_ID", job_id.c_str(), 1);
    setenv("RT_LAUNCH_STATUS_DIR", job_dir.c_str(), 1);
    std::vector<std::string> exported = {"RT_LAUNCH_JOB_ID", "RT_LAUNCH_STATUS_DIR"};
    if (attach_ || !listen_.empty()) {  // each rank's `rtorch run` serves it (rt/remote/agent.h)
      setenv("RT_ATTACH", "1", 1);
      exported.push_back("RT_ATTACH");
      if (!listen_.empty()) {
        setenv("RT_ATTACH_LISTEN", listen_.c_str(), 1);
        setenv("RT_ATTACH_LISTEN_AUTH", listen_auth_.c_str(), 1);
        exported.push_back("RT_ATTACH_LISTEN");
        exported.push_back("RT_ATTACH_LISTEN_AUTH");
      }
      fmt::print(stderr, "rtorch launch: ranks are attachable: rtorch attach {}\n", job_id);
    }
    // As torchrun: several ranks on one node each get one OpenMP thread unless told otherwise.
    if (nproc_per_node_ > 1 && global.threads == 0 && !std::getenv("OMP_NUM_THREADS")) {
      setenv("OMP_NUM_THREADS", "1", 1);
      exported.push_back("OMP_NUM_THREADS");
    }

    for (int attempt = 0;; ++attempt) {
      clear_rank_statuses(job_dir);
      std::fflush(stdout);
      const std::vector<std::string> argv = mpirun_argv(mpirun, {nproc_per_node_, exported, rank_argv(global, attempt)},
                                                        getuid() == 0);
      ChildSpec spec;
      spec.argv = argv;
      spec.parent_death_signal = SIGTERM;  // mpirun tears the job down if the launcher is killed
      const pid_t pid = spawn_child(spec);
      ExitStatus mpirun_exit;
      int interrupted = 0;
      {
        SignalForwarding forwarding(pid);
        mpirun_exit = wait_child(pid);
        interrupted = forwarding.received();
      }
      const std::vector<RankStatus> statuses = read_rank_statuses(job_dir);
      const RankStatus* failure = first_failure(statuses);
      if (!failure && mpirun_exit.shell_code() == 0 && static_cast<int>(statuses.size()) == nproc_per_node_) {
        std::filesystem::remove_all(job_dir);
        return 0;
      }
      if (interrupted != 0) {
        fmt::print(stderr, "rtorch launch: stopped by {}; not restarting (status files in {})\n",
                   signal_name(interrupted), job_dir.string());
        return 128 + interrupted;
      }
      int code;
      if (failure) {
        fmt::print(stderr, "{}", failure_report(statuses, *failure, local_ranks()));
        code = failure->shell_code();
      } else {
        code = mpirun_exit.shell_code() != 0 ? mpirun_exit.shell_code() : 1;
        fmt::print(stderr,
                   "rtorch launch: mpirun ended with {} but only {} of {} ranks reported their end (see mpirun's "
                   "messages above)\n",
                   mpirun_exit.signaled ? "signal " + signal_name(mpirun_exit.code) : fmt::format("exit code {}", mpirun_exit.code),
                   statuses.size(), nproc_per_node_);
      }
      if (attempt >= max_restarts_) {
        fmt::print(stderr, "rtorch launch: {}; status files in {}\n",
                   max_restarts_ == 0 ? "no restarts allowed (--max-restarts 0)"
                                      : fmt::format("all {} restarts used", max_restarts_),
                   job_dir.string());
        return code;
      }
      fmt::print(stderr, "rtorch launch: restart {}/{}\n", attempt + 1, max_restarts_);
      std::fflush(stderr);
    }
  }

 private:
  int check_arguments() {
    auto usage = [](const std::string& what) {
      fmt::print(stderr, "rtorch launch: {}\nRun 'rtorch launch --help' for usage.\n", what);
      return kUsageError;
    };
    if (nproc_per_node_ < 1)
      return usage(fmt::format("--nproc-per-node must be at least 1 (got {})", nproc_per_node_));
    if (nnodes_ < 1) return usage(fmt::format("--nnodes must be at least 1 (got {})", nnodes_));
    if (node_rank_ < 0 || node_rank_ >= nnodes_)
      return usage(fmt::format("--node-rank must be between 0 and {} for --nnodes {} (got {})", nnodes_ - 1, nnodes_,
                               node_rank_));
    if (master_port_ < 0 || master_port_ > 65535)
      return usage(fmt::format("--master-port must be between 0 and 65535 (got {})", master_port_));
    if (max_restarts_ < 0) return usage(fmt::format("--max-restarts must be 0 or more (got {})", max_restarts_));
    if (!(monitor_interval_ > 0))
      return usage(fmt::format("--monitor-interval must be a positive number of seconds (got {})", monitor_interval_));
    if (script_option_->count() == 0)
      return usage("no script given: rtorch launch --nproc-per-node N SCRIPT [ARGS...]");
    if (FILE* f = std::fopen(script_.c_str(), "rb")) {
      std::fclose(f);
    } else {
      fmt::print(stderr, "rtorch launch: cannot open '{}': {}\n", script_, std::strerror(errno));
      return kUsageError;
    }
    return 0;
  }

  std::vector<int> local_ranks() const {
    std::vector<int> ranks;
    for (int i = 0; i < nproc_per_node_; ++i) ranks.push_back(node_rank_ * nproc_per_node_ + i);
    return ranks;
  }

  std::vector<std::string> rank_argv(const GlobalOptions& global, int attempt) const {
    std::vector<std::string> argv = {self_executable()};
    if (global.threads > 0) {
      argv.push_back("--threads");
      argv.push_back(std::to_string(global.threads));
    }
    for (const std::string& a :
         {std::string("launch-rank"), std::string("--nproc-per-node"), std::to_string(nproc_per_node_),
          std::string("--nnodes"), std::to_string(nnodes_), std::string("--node-rank"), std::to_string(node_rank_),
          std::string("--master-addr"), master_addr_, std::string("--master-port"), std::to_string(master_port_),
          std::string("--restart-count"), std::to_string(attempt), std::string("--max-restarts"),
          std::to_string(max_restarts_), std::string("--monitor-interval"), fmt::format("{}", monitor_interval_)})
      argv.push_back(a);
    if (no_prefix_) argv.push_back("--no-prefix");
    if (!store_.empty()) {
      argv.push_back("--store");
      argv.push_back(store_);
      argv.push_back(profile_memory_ ? "--profile-memory" : "--no-profile-memory");
    }
    argv.push_back("--");
    argv.push_back(script_);
    argv.insert(argv.end(), args_.begin(), args_.end());
    return argv;
  }

  int nproc_per_node_ = 1;
  int nnodes_ = 1;
  int node_rank_ = 0;
  std::string master_addr_ = "127.0.0.1";
  int master_port_ = 29500;
  int max_restarts_ = 0;
  double monitor_interval_ = 0.1;
  bool no_prefix_ = false;
  bool attach_ = false;
  std::string listen_, listen_auth_ = "auto";
  std::string store_;
  bool profile_memory_ = true;
  std::string script_;
  CLI::Option* script_option_ = nullptr;
  std::vector<std::string> args_;
};

}  // namespace

std::unique_ptr<Command> make_launch_command() { return std::make_unique<LaunchCommand>(); }

}  // namespace rt::cli
