// `rtorch attach [HOST:]JOB [--record STORE] [--duration S]`: attach to every rank of an attachable job on this
// machine (`rtorch ps` lists them) or, with HOST:, on another one over SSH (rt/remote/ssh.h), or to one agent
// over TCP (--tcp), follow their sessions live and, with --record, save each session a rank records (the
// program's own profiles and, between them, the agent's: Note [What subscribers follow]) as it completes.
// Ends when every rank's process exits, after --duration, or at Ctrl-C; what was received is kept in every case
// (a rank that died leaves an incomplete session, as a killed `--store` run does).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <optional>
#include <unistd.h>

#include <fmt/ranges.h>

#include "command.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/store.h"
#include "rt/remote/client.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/manifest.h"
#include "rt/remote/ssh.h"
#include "rt/remote/tcp.h"

namespace rt::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted.store(true); }

// The rank's clock against ours (Note [Rank clocks] in rt/prof/rank_merge.h); none from an agent that does
// not answer "clock" (an older one): its sessions then merge aligned on their starts, as before.
std::optional<rt::remote::ClockEstimate> measure_clock(rt::remote::AgentClient& client) {
  try {
    return client.estimate_clock();
  } catch (const rt::remote::RemoteError&) {
    return std::nullopt;
  }
}

struct AttachedRank {
  rt::remote::AgentManifest manifest;
  std::optional<rt::remote::AgentClient> client;
  std::optional<rt::remote::ClockEstimate> clock;  // its clock against ours, measured once (saved with sessions)
  std::string ended;         // why the rank's connection ended; "" while attached
  uint64_t saved_reset = 0;  // the client's resets() when its session was last saved (+1: none saved yet)
  std::vector<std::string> saved;  // "session 7 (412 ops)" per saved session
  uint64_t ops_seen = 0;     // ops of the sessions already saved
};

class AttachCommand final : public Command {
 public:
  std::string name() const override { return "attach"; }
  std::string summary() const override { return "Attach to a running job's ranks, follow them live, record them"; }
  void configure(CLI::App& app) override {
    app.add_option("job", job_, "The job to attach to (a JOB of `rtorch ps`), HOST:JOB over SSH; default: the only job")
        ->type_name("[HOST:]JOB");
    app.add_option("--record", store_, "Save each rank's session into this SQLite store")->type_name("STORE.sqlite");
    app.add_option("--duration", duration_s_, "Detach after this many seconds (default: until the job ends)")
        ->type_name("S")->check(CLI::Range(0.001, 3.2e7));  // up to a year
    app.add_flag("--quiet", quiet_, "No progress line");
    app.add_option("--tcp", tcp_, "Attach to the one agent listening on TCP there (`rtorch run --attach --listen`)")
        ->type_name("ADDR:PORT");
    app.add_option("--connection-file", connection_file_, "With --tcp: the agent's connection file (its token)")
        ->type_name("FILE");
    app.add_option("--scope", scope_, "With --connection-file: observe (default) or control")
        ->check(CLI::IsMember({"observe", "control"}));
    app.footer("JOB may be HOST:JOB to attach over SSH: `ssh HOST rtorch relay` reaches the agents there, no port is\n"
               "opened, ~/.ssh/config and jump hosts apply. RT_SSH overrides the ssh command (e.g.\n"
               "RT_SSH=\"ssh -p 2222 -i KEY\"); RT_REMOTE_RTORCH names rtorch on that host when it is not on its PATH.");
  }

  int execute(const GlobalOptions&) override {
    if (!tcp_.empty()) return attach_tcp();
    const auto [host, job] = rt::remote::split_host_job(job_);
    job_ = job;
    const std::string where = host.empty() ? "this machine" : host;
    std::vector<rt::remote::AgentManifest> all;
    try {
      all = host.empty() ? rt::remote::list_manifests(rt::remote::ensure_runtime_dir())
                         : rt::remote::list_remote_manifests(host);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch attach: {}\n", e.what());
      return 1;
    }
    std::vector<std::string> jobs;
    for (const auto& m : all)
      if (jobs.empty() || jobs.back() != m.job) jobs.push_back(m.job);
    if (job_.empty()) {
      if (jobs.size() != 1) {
        fmt::print(stderr, "rtorch attach: {}; name one: rtorch attach {}JOB (see `{}rtorch ps`)\n",
                   jobs.empty() ? "no attachable job runs on " + where : fmt::format("{} jobs run on {}", jobs.size(), where),
                   host.empty() ? "" : host + ":", host.empty() ? "" : "ssh " + host + " ");
        return 2;
      }
      job_ = jobs.front();
    }
    std::vector<AttachedRank> ranks;
    for (const auto& m : all)
      if (m.job == job_) {
        AttachedRank rank;
        rank.manifest = m;
        ranks.push_back(std::move(rank));
      }
    if (ranks.empty()) {
      fmt::print(stderr, "rtorch attach: no job '{}' on {}{}{}\n", job_, where, jobs.empty() ? "" : "; running: ",
                 fmt::format("{}", fmt::join(jobs, ", ")));
      return 2;
    }
    if (!open_store()) return 1;
    for (auto& r : ranks) {
      r.saved_reset = ~uint64_t(0);
      try {
        // Over SSH: one `ssh HOST rtorch relay --job J --rank R` per rank (rt/remote/ssh.h).
        r.client.emplace(host.empty() ? rt::remote::AgentClient::connect(r.manifest.socket, "rtorch attach")
                                      : rt::remote::AgentClient::connect_command(
                                            rt::remote::relay_command(host, r.manifest.job, r.manifest.rank),
                                            "rtorch attach"));
        r.client->request("subscribe");
        r.clock = measure_clock(*r.client);
      } catch (const std::exception& e) {
        r.ended = e.what();
        fmt::print(stderr, "rtorch attach: rank {}: {}\n", r.manifest.rank, e.what());
      }
    }
    return follow(ranks);
  }

 private:
  bool open_store() {
    if (store_.empty()) return true;
    try {
      store_handle_.emplace(rt::prof::Store::open(store_));
      return true;
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch attach: cannot record: {}\n", e.what());
      return false;
    }
  }

  // --tcp ADDR:PORT: one rank's agent that listens on TCP (rt/remote/tcp.h).
  int attach_tcp() {
    if (!open_store()) return 1;
    std::vector<AttachedRank> ranks(1);
    ranks[0].saved_reset = ~uint64_t(0);
    try {
      std::optional<rt::remote::TcpToken> token;
      if (!connection_file_.empty())
        token = rt::remote::read_connection_file(connection_file_).token(rt::remote::parse_scope(scope_));
      ranks[0].client.emplace(rt::remote::AgentClient::connect_tcp(tcp_, token, "rtorch attach"));
      ranks[0].manifest = ranks[0].client->agent();
      ranks[0].client->request("subscribe");
      ranks[0].clock = measure_clock(*ranks[0].client);
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch attach: {}\n", e.what());
      return 1;
    }
    return follow(ranks);
  }

  int follow(std::vector<AttachedRank>& ranks) {
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    std::optional<std::chrono::steady_clock::time_point> deadline;  // --duration; none: until the job ends
    if (duration_s_ > 0)
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(duration_s_ * 1000));
    const bool live_line = !quiet_ && ::isatty(STDERR_FILENO);
    auto last_line = std::chrono::steady_clock::now();
    for (;;) {
      size_t open = 0;
      for (auto& r : ranks) {
        if (!r.ended.empty() || !r.client) continue;
        try {
          auto event = r.client->poll(std::chrono::milliseconds(20));
          while (event == rt::remote::ClientEvent::Batch || event == rt::remote::ClientEvent::Notice) {
            if (r.client->session().complete) save(r);  // before the next session's reset replaces it
            event = r.client->poll(std::chrono::milliseconds(0));
          }
          if (r.client->session().complete) save(r);
          if (event == rt::remote::ClientEvent::Closed)
            r.ended = r.client->error().empty() ? "the process exited" : r.client->error();
        } catch (const std::exception& e) {
          r.ended = e.what();
        }
        if (r.ended.empty()) ++open;
      }
      if (live_line && std::chrono::steady_clock::now() - last_line > std::chrono::milliseconds(500)) {
        fmt::print(stderr, "\r\033[K{}", status_line(ranks));
        last_line = std::chrono::steady_clock::now();
      }
      if (open == 0 || g_interrupted.load() || (deadline && std::chrono::steady_clock::now() >= *deadline)) break;
    }
    if (live_line) fmt::print(stderr, "\r\033[K");
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return report(ranks);
  }

  static std::string status_line(const std::vector<AttachedRank>& ranks) {
    std::string line;
    for (const auto& r : ranks) {
      if (!r.client) continue;
      const auto& s = r.client->session();
      line += fmt::format("{}rank {}: {} ops, {} steps{}", line.empty() ? "" : " | ", r.manifest.rank, s.ops.size(),
                          s.steps.size(), r.client->dropped_by_agent() ? fmt::format(", {} dropped", r.client->dropped_by_agent()) : "");
    }
    return line;
  }

  // Saves the rank's current session once (complete, or at the end whatever arrived) into the store.
  void save(AttachedRank& r) {
    if (r.saved_reset == r.client->resets()) return;
    r.saved_reset = r.client->resets();
    const auto& s = r.client->session();
    r.ops_seen += s.ops.size();
    if (!store_handle_ || s.start_ns == 0 || rt::remote::record_count(s) == 0) return;  // nothing recorded
    try {
      rt::prof::SessionData data = s;
      data.metadata.try_emplace("job_id", r.manifest.job);
      data.metadata.try_emplace("rank", std::to_string(r.manifest.rank));
      data.metadata["attached_from"] = fmt::format("{} pid {}", r.manifest.host, r.manifest.pid);
      if (r.clock) {  // merging the job's ranks later puts them on this recorder's clock
        data.metadata[rt::prof::kClockOffsetKey] = std::to_string(r.clock->offset_ns);
        data.metadata[rt::prof::kClockErrorKey] = std::to_string(r.clock->error_ns);
      }
      if (r.client->dropped_by_agent() > 0) data.dropped_records += r.client->dropped_by_agent();
      const int64_t id = store_handle_->save_session(data);
      r.saved.push_back(fmt::format("session {} ({} ops{})", id, s.ops.size(), s.complete ? "" : ", incomplete"));
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch attach: rank {}: cannot record: {}\n", r.manifest.rank, e.what());
      ++record_failures_;
    }
  }

  int report(std::vector<AttachedRank>& ranks) {
    int failures = record_failures_;
    for (auto& r : ranks) {
      if (!r.client) {
        ++failures;
        continue;
      }
      const auto& s = r.client->session();
      const bool complete = s.complete;
      const uint64_t ops = r.ops_seen + (r.saved_reset == r.client->resets() ? 0 : s.ops.size());
      save(r);  // what arrived of a session that did not complete
      fmt::print("rank {} (pid {}): {} ops, {} dropped{}{}{}\n", r.manifest.rank, r.manifest.pid, ops,
                 r.client->dropped_by_agent(), complete ? "" : " (incomplete)",
                 r.saved.empty() ? "" : fmt::format(" -> {}: {}", store_, fmt::join(r.saved, ", ")),
                 r.ended.empty() ? "" : fmt::format("; ended: {}", r.ended));
    }
    return failures == 0 ? 0 : 1;
  }

  std::optional<rt::prof::Store> store_handle_;
  int record_failures_ = 0;
  std::string job_;
  std::string tcp_, connection_file_, scope_ = "observe";
  std::string store_;
  double duration_s_ = 0;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_attach_command() { return std::make_unique<AttachCommand>(); }

}  // namespace rt::cli
