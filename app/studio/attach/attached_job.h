// app/studio/attach/attached_job.h — the studio attached to one job: a worker thread holds an
// rt::remote::AgentClient per rank, subscribes to each rank's profiling session and mirrors it (SessionMirror)
// for the GUI thread, which reads the ranks' states and sessions without ever touching the network.
//
//   auto job = std::make_shared<AttachedJob>(host, listing);     // returns at once; the worker connects
//   RankState s = job->rank_state(0);                            // any thread: phase, counts, dropped
//   rt::prof::SessionDelta d = job->mirror(0).read_since(cursor); // any thread: the rank's session so far
//   job->request_detach();                                       // returns at once; the worker closes
//   while (!job->finished()) ...;                                // every rank detached, exited or lost
//
// Contracts
// - All network I/O happens on the worker thread, each read bounded by Options' timeouts; the GUI thread's
//   calls only take short locks (a state copy, a mirror read).
// - Ranks are those of the listing, in its order. Each starts Connecting and becomes Live once subscribed, or
//   NotAnswering (connect or subscribe failed, the reason in message). A Live rank ends as ProcessExited (its
//   connection closed and its process is gone, or the host cannot tell and the close was clean; after a clean
//   close the worker watches the process for up to 3 s, since an agent closes at exit before its process is
//   gone), ConnectionLost (the connection broke, the agent refused us, or it closed and the process still runs;
//   message says why) or Detached (request_detach). Its mirror keeps everything received before.
// - The worker ends when every rank ended; the destructor asks it to and joins it (bounded by the timeouts).
// - generation() changes whenever a rank's state or session changed, so a view polls it cheaply.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attach/attach_host.h"
#include "attach/session_mirror.h"

namespace rt::studio {

enum class RankPhase { Connecting, Live, NotAnswering, ProcessExited, ConnectionLost, Detached };

// "connecting", "live", "not answering", "process exited", "connection lost", "detached".
const char* phase_text(RankPhase phase);
inline bool phase_ended(RankPhase p) { return p != RankPhase::Connecting && p != RankPhase::Live; }

struct RankState {
  remote::AgentManifest manifest;
  RankPhase phase = RankPhase::Connecting;
  std::string message;         // the reason of NotAnswering / ConnectionLost; "" otherwise
  uint64_t dropped = 0;        // records the agent dropped because the studio fell behind
  uint64_t batches = 0;        // event batches received
  SessionMirror::Counts counts;
  std::optional<remote::ClockEstimate> clock;  // the rank's clock against the studio's, measured once when live
};

class AttachedJob {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{2000};  // Hello/Welcome
    std::chrono::milliseconds request_timeout{3000};  // subscribe
    std::chrono::milliseconds poll_timeout{20};       // one rank's wait for a frame in a round
  };

  AttachedJob(std::shared_ptr<const AttachHost> host, JobListing job, Options options);
  AttachedJob(std::shared_ptr<const AttachHost> host, JobListing job) : AttachedJob(std::move(host), std::move(job), Options{}) {}
  ~AttachedJob();
  AttachedJob(const AttachedJob&) = delete;
  AttachedJob& operator=(const AttachedJob&) = delete;

  const std::string& job() const { return job_.job; }
  const std::string& host_name() const { return job_.host; }
  size_t rank_count() const { return job_.ranks.size(); }
  RankState rank_state(size_t index) const;
  const SessionMirror& mirror(size_t index) const { return *mirrors_.at(index); }

  void request_detach();
  bool detach_requested() const { return stop_.load(); }
  bool finished() const { return finished_.load(); }
  uint64_t generation() const { return generation_.load(); }

 private:
  void run();
  void set_phase(size_t index, RankPhase phase, std::string message);

  std::shared_ptr<const AttachHost> host_;
  JobListing job_;
  Options options_;
  std::vector<std::unique_ptr<SessionMirror>> mirrors_;
  mutable std::mutex mu_;
  std::vector<RankState> states_;  // guarded by mu_
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<uint64_t> generation_{0};
  std::thread worker_;
};

// Every rank's session so far as one SessionData (rt::prof::merge_rank_sessions: "rank N · main" tracks side by
// side), for a timeline of the whole job. Ranks whose mirror is still empty are left out; throws rt::ValueError
// when every one is.
prof::SessionData merge_attached_ranks(const AttachedJob& job);

}  // namespace rt::studio
