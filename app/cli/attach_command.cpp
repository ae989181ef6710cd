// `rtorch attach JOB [--record STORE] [--duration S]`: attach to every rank of an attachable job on this machine
// (`rtorch ps` lists them), follow their sessions live and, with --record, save each session a rank records
// (the program's own profiles and, between them, the agent's: Note [What subscribers follow]) as it completes.
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
#include "rt/prof/store.h"
#include "rt/remote/client.h"
#include "rt/remote/event_batch.h"
#include "rt/remote/manifest.h"

namespace rt::cli {
namespace {

std::atomic<bool> g_interrupted{false};
void on_interrupt(int) { g_interrupted.store(true); }

struct AttachedRank {
  rt::remote::AgentManifest manifest;
  std::optional<rt::remote::AgentClient> client;
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
    app.add_option("job", job_, "The job to attach to (a JOB of `rtorch ps`); default: the only job running")
        ->type_name("JOB");
    app.add_option("--record", store_, "Save each rank's session into this SQLite store")->type_name("STORE.sqlite");
    app.add_option("--duration", duration_s_, "Detach after this many seconds (default: until the job ends)")
        ->type_name("S")->check(CLI::PositiveNumber);
    app.add_flag("--quiet", quiet_, "No progress line");
  }

  int execute(const GlobalOptions&) override {
    if (job_.find(':') != std::string::npos) {
      fmt::print(stderr, "rtorch attach: '{}' names a host: attaching over SSH is not supported yet; run "
                         "`rtorch attach {}` on that host (with --record) and copy the store\n",
                 job_, job_.substr(job_.find(':') + 1));
      return 2;
    }
    std::vector<rt::remote::AgentManifest> all;
    try {
      all = rt::remote::list_manifests(rt::remote::ensure_runtime_dir());
    } catch (const std::exception& e) {
      fmt::print(stderr, "rtorch attach: {}\n", e.what());
      return 1;
    }
    std::vector<std::string> jobs;
    for (const auto& m : all)
      if (jobs.empty() || jobs.back() != m.job) jobs.push_back(m.job);
    if (job_.empty()) {
      if (jobs.size() != 1) {
        fmt::print(stderr, "rtorch attach: {}; name one: rtorch attach JOB (see `rtorch ps`)\n",
                   jobs.empty() ? "no attachable job runs on this machine" : fmt::format("{} jobs run", jobs.size()));
        return 2;
      }
      job_ = jobs.front();
    }
    std::vector<AttachedRank> ranks;
    for (const auto& m : all)
      if (m.job == job_) ranks.push_back({m, std::nullopt, ""});
    if (ranks.empty()) {
      fmt::print(stderr, "rtorch attach: no job '{}' on this machine{}{}\n", job_, jobs.empty() ? "" : "; running: ",
                 fmt::format("{}", fmt::join(jobs, ", ")));
      return 2;
    }
    if (!store_.empty()) {
      try {
        store_handle_.emplace(rt::prof::Store::open(store_));
      } catch (const std::exception& e) {
        fmt::print(stderr, "rtorch attach: cannot record: {}\n", e.what());
        return 1;
      }
    }
    for (auto& r : ranks) {
      r.saved_reset = ~uint64_t(0);
      try {
        r.client.emplace(rt::remote::AgentClient::connect(r.manifest.socket, "rtorch attach"));
        r.client->request("subscribe");
      } catch (const std::exception& e) {
        r.ended = e.what();
        fmt::print(stderr, "rtorch attach: rank {}: {}\n", r.manifest.rank, e.what());
      }
    }
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(int64_t(duration_s_ > 0 ? duration_s_ * 1000 : 1e15));
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
      if (open == 0 || g_interrupted.load() || std::chrono::steady_clock::now() >= deadline) break;
    }
    if (live_line) fmt::print(stderr, "\r\033[K");
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    return report(ranks);
  }

 private:
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
  std::string store_;
  double duration_s_ = 0;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_attach_command() { return std::make_unique<AttachCommand>(); }

}  // namespace rt::cli
