// `rtorch relay --job JOB [--rank R]` and `rtorch relay --list`: the far end of attaching over SSH. The studio
// and `rtorch attach HOST:JOB` run `ssh HOST rtorch relay --list` to see the host's jobs, then one
// `ssh HOST rtorch relay --job JOB --rank R` per rank, which joins ssh's stdin and stdout to that rank's agent
// socket (rt/remote/relay.h). Nothing listens on the network: ssh carries everything.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include "command.h"
#include "rt/remote/manifest.h"
#include "rt/remote/relay.h"

namespace rt::cli {
namespace {

class RelayCommand final : public Command {
 public:
  std::string name() const override { return "relay"; }
  std::string summary() const override { return "Join stdin/stdout to a rank's agent (the far end of attach over SSH)"; }
  void configure(CLI::App& app) override {
    app.add_option("--job", job_, "The job whose agent to reach (a JOB of `rtorch ps`)")->type_name("JOB");
    app.add_option("--rank", rank_, "Its rank (default: the job's only rank)")->type_name("R")->check(CLI::NonNegativeNumber);
    app.add_flag("--list", list_, "Print this machine's attachable ranks as JSON lines (manifests) and exit");
    app.footer("Started by ssh, not by hand: `rtorch attach HOST:JOB` and the studio run\n"
               "`ssh HOST rtorch relay --job JOB --rank R` and speak the remote-attach protocol through it\n"
               "(docs/remote-attach.md). RT_SSH and RT_REMOTE_RTORCH on the client choose the ssh command and\n"
               "this program's path.");
  }

  int execute(const GlobalOptions&) override {
    if (list_) {
      try {
        for (const auto& m : rt::remote::list_manifests(rt::remote::ensure_runtime_dir()))
          fmt::print("{}\n", rt::remote::manifest_json(m));
      } catch (const std::exception& e) {
        fmt::print(stderr, "rtorch relay: {}\n", e.what());
        return 1;
      }
      return 0;
    }
    if (job_.empty()) {
      fmt::print(stderr, "rtorch relay: name the job (--job JOB) or list them (--list)\n");
      return 2;
    }
    if (::isatty(STDIN_FILENO)) {
      fmt::print(stderr, "rtorch relay: stdin is a terminal; the relay speaks the remote-attach protocol to a "
                         "program, run as `ssh HOST rtorch relay --job {}` by `rtorch attach HOST:{}` or the studio\n",
                 job_, job_);
      return 2;
    }
    rt::remote::AgentManifest agent;
    try {
      agent = rt::remote::find_local_agent(job_, rank_);
    } catch (const std::exception& e) {
      const std::string why = fmt::format("rtorch relay: {}", e.what());
      rt::remote::write_error_frame(STDOUT_FILENO, why);
      fmt::print(stderr, "{}\n", why);
      return 1;
    }
    return rt::remote::relay_stdio(agent);
  }

 private:
  std::string job_;
  int rank_ = -1;
  bool list_ = false;
};

}  // namespace

std::unique_ptr<Command> make_relay_command() { return std::make_unique<RelayCommand>(); }

}  // namespace rt::cli
