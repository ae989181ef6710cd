#include "attach/attached_job.h"

#include <optional>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/prof/rank_merge.h"

namespace rt::studio {

const char* phase_text(RankPhase phase) {
  switch (phase) {
    case RankPhase::Connecting: return "connecting";
    case RankPhase::Live: return "live";
    case RankPhase::NotAnswering: return "not answering";
    case RankPhase::ProcessExited: return "process exited";
    case RankPhase::ConnectionLost: return "connection lost";
    case RankPhase::Detached: return "detached";
  }
  return "?";
}

AttachedJob::AttachedJob(std::shared_ptr<const AttachHost> host, JobListing job, Options options)
    : host_(std::move(host)), job_(std::move(job)), options_(options) {
  for (const RankListing& r : job_.ranks) {
    mirrors_.push_back(std::make_unique<SessionMirror>());
    RankState s;
    s.manifest = r.manifest;
    states_.push_back(std::move(s));
  }
  worker_ = std::thread([this] { run(); });
}

AttachedJob::~AttachedJob() {
  stop_.store(true);
  if (worker_.joinable()) worker_.join();
}

RankState AttachedJob::rank_state(size_t index) const {
  RankState s;
  {
    std::lock_guard lock(mu_);
    s = states_.at(index);
  }
  s.counts = mirrors_[index]->counts();
  return s;
}

void AttachedJob::request_detach() { stop_.store(true); }

void AttachedJob::set_phase(size_t index, RankPhase phase, std::string message) {
  {
    std::lock_guard lock(mu_);
    states_[index].phase = phase;
    states_[index].message = std::move(message);
  }
  ++generation_;
}

void AttachedJob::run() {
  const size_t n = job_.ranks.size();
  std::vector<std::optional<remote::AgentClient>> clients(n);
  std::vector<uint64_t> published(n, ~uint64_t(0));
  for (size_t i = 0; i < n && !stop_.load(); ++i) {
    try {
      clients[i].emplace(host_->connect(job_.ranks[i].manifest, options_.connect_timeout));
      clients[i]->request("subscribe", options_.request_timeout);
      // The rank's clock against ours (Note [Rank clocks]): the "all ranks" entry puts every rank on our clock.
      // An agent that does not answer "clock" (an older one) leaves it unmeasured: ranks then align on starts.
      try {
        const remote::ClockEstimate clock = clients[i]->estimate_clock(8, options_.request_timeout);
        std::lock_guard<std::mutex> lk(mu_);
        states_[i].clock = clock;
      } catch (const remote::RemoteError&) {
      }
      set_phase(i, RankPhase::Live, "");
    } catch (const std::exception& e) {
      clients[i].reset();
      set_phase(i, RankPhase::NotAnswering, e.what());
    }
  }
  // Publishes what rank i's client holds when it received something since the last publish.
  auto publish = [&](size_t i) {
    const remote::AgentClient& c = *clients[i];
    const uint64_t seen = c.batches() + (c.resets() << 40);
    if (seen == published[i]) return;
    published[i] = seen;
    mirrors_[i]->publish(c.session(), c.resets());
    {
      std::lock_guard lock(mu_);
      states_[i].dropped = c.dropped_by_agent();
      states_[i].batches = c.batches();
    }
    ++generation_;
  };
  // A clean close while the process still runs is usually its exit under way (the agent closes at exit, before
  // the process is gone): such a rank waits up to kExitGrace before it counts as "connection lost".
  using Clock = std::chrono::steady_clock;
  constexpr auto kExitGrace = std::chrono::seconds(3);
  std::vector<std::optional<Clock::time_point>> closing(n);
  auto end_rank = [&](size_t i, std::string error) {
    publish(i);
    const std::optional<bool> running = host_->process_running(job_.ranks[i].manifest.pid);
    clients[i].reset();
    if (running == false || (!running && error.empty()))
      set_phase(i, RankPhase::ProcessExited, error);
    else if (error.empty())
      closing[i] = Clock::now() + kExitGrace;
    else
      set_phase(i, RankPhase::ConnectionLost, error);
  };
  for (size_t i = 0; i < n; ++i)
    if (clients[i]) publish(i);
  constexpr int kFramesPerRound = 256;  // then the next rank gets its turn, and a detach is seen
  for (;;) {
    if (stop_.load()) break;
    size_t open = 0, polled = 0;
    for (size_t i = 0; i < n; ++i) {
      if (closing[i]) {
        if (host_->process_running(job_.ranks[i].manifest.pid) == false) {
          set_phase(i, RankPhase::ProcessExited, "");
          closing[i].reset();
        } else if (Clock::now() >= *closing[i]) {
          set_phase(i, RankPhase::ConnectionLost, "the agent stopped serving; the process still runs");
          closing[i].reset();
        } else {
          ++open;
        }
        continue;
      }
      if (!clients[i]) continue;
      ++polled;
      try {
        auto event = clients[i]->poll(options_.poll_timeout);
        for (int k = 0; k < kFramesPerRound && event != remote::ClientEvent::Closed && event != remote::ClientEvent::Nothing; ++k)
          event = clients[i]->poll(std::chrono::milliseconds(0));
        if (event == remote::ClientEvent::Closed) {
          end_rank(i, clients[i]->error());
          if (closing[i]) ++open;
          continue;
        }
        publish(i);
        ++open;
      } catch (const std::exception& e) {
        end_rank(i, e.what());
      }
    }
    if (open == 0) break;
    if (polled == 0) std::this_thread::sleep_for(options_.poll_timeout);  // only exits to watch
  }
  for (size_t i = 0; i < n; ++i) {
    if (closing[i]) set_phase(i, RankPhase::Detached, "");
  }
  for (size_t i = 0; i < n; ++i) {
    if (!clients[i]) continue;
    publish(i);
    clients[i].reset();
    set_phase(i, RankPhase::Detached, "");
  }
  finished_.store(true);
  ++generation_;
}

prof::SessionData merge_attached_ranks(const AttachedJob& job) {
  std::vector<prof::RankSession> ranks;
  for (size_t i = 0; i < job.rank_count(); ++i) {
    prof::SessionDelta d = job.mirror(i).read_since({});
    if (d.records.start_ns == 0 && d.records.ops.empty()) continue;
    const RankState state = job.rank_state(i);
    std::optional<prof::RankClockOffset> clock;
    if (state.clock) clock = prof::RankClockOffset{state.clock->offset_ns, state.clock->error_ns};
    ranks.push_back({state.manifest.rank, std::move(d.records), clock});
  }
  if (ranks.empty())
    throw rt::ValueError(fmt::format("job {}: no rank has sent its session yet", job.job()));
  return prof::merge_rank_sessions(std::move(ranks));
}

}  // namespace rt::studio
