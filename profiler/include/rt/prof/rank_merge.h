// rt/prof/rank_merge.h — the sessions of a data-parallel job's ranks as one SessionData, so one timeline
// shows every rank's threads and GPU streams side by side; and which stored sessions belong to one job.
//
//   rt::prof::Store store = rt::prof::Store::open("job.sqlite");     // `rtorch launch --store job.sqlite`
//   for (const rt::prof::LaunchJob& job : rt::prof::launch_jobs(store.list_sessions())) {
//     std::vector<rt::prof::RankSession> ranks;
//     for (const rt::prof::LaunchJobRank& r : job.ranks) ranks.push_back({r.rank, store.load_session(r.session_id)});
//     rt::prof::SessionData all = rt::prof::merge_rank_sessions(std::move(ranks));
//     // all.threads: "rank 0 · main", "rank 1 · main", ...
//   }
//
// Contracts (merge_rank_sessions)
// - Ranks are merged in rank order (the input order does not matter); two inputs with the same rank throw
//   rt::ValueError, as does an empty input.
// - Threads: each rank's engine thread ids are renumbered (1, 2, ... in rank order, then in each rank's
//   ThreadRecord order, then threads that only records name), so no two ranks share one; names become
//   "rank N · main" ("rank N · thread <id>" for an unnamed thread), and their ThreadRecord::rank is N (views
//   list a rank's tracks together, in rank order). Ops, runtime/driver calls, collectives and memory events
//   follow their thread; graphs too. Collectives keep their group names and get CollectiveRecord::rank N.
// - GPU streams: each rank's (device, stream) keeps its device and gets a new stream number, unique in the
//   merged data, and a StreamRecord named "rank N · cuda:D stream S" (the recorded numbers).
// - Links that are per process are made unique too: op correlation ids and GPU external ids (op -> kernel)
//   and CUPTI correlation ids are offset per rank, sequence numbers (forward op <-> backward node) as well, so
//   a flow never joins two ranks. Memory addresses are kept (two ranks' blocks can share an address and a
//   device number: a memory view of merged data adds the ranks' allocations up on one device).
// - Counters and steps: counter names become "rank N · loss". A timeline has one step track, on which the
//   ranks' steps would overlap, so each rank's steps become user ranges (OpKind::UserRange) named "step K" on
//   a thread of their own, "rank N · steps" (as PyTorch's profiler shows ProfilerStep#K ranges); the merged
//   data has no StepRecords. Gradient histograms keep their step numbers (each rank's own) and get names
//   "rank N · fc.weight", like counters.
// - Counts are preserved: the merged data holds the sum of the ranks' ops plus one user range per step, and
//   the sums of their GPU records, collectives, memory events, counters, gradient histograms and graphs; threads are the sum plus one steps
//   thread per rank that has steps.
// - Clocks (Note [Rank clocks]): with RankClock::Recorded times are kept as recorded (each process's steady
//   clock: CLOCK_MONOTONIC, one clock for every process of a machine); with RankClock::SessionStart each
//   rank's times are shifted so that every session starts at the earliest rank's start; with
//   RankClock::Estimated each rank's times are moved by its measured RankSession::clock offset onto the
//   viewer's clock (ValueError when a rank has none). RankClock::Auto keeps recorded times when every
//   session's metadata names the same "host", else uses the measured offsets when every rank has one, and
//   aligns on session starts otherwise (a session without "host" counts as another machine). A rank without
//   RankSession::clock takes it from its metadata kClockOffsetKey and kClockErrorKey when both are there (what
//   `rtorch attach --record` measured; both ignored unless whole decimal numbers). The choice is in
//   the result's metadata["rank_clock"]: "recorded (one host: H)", "estimated by ping, within E us (hosts:
//   ...)" (E the largest error) or "aligned on session starts (hosts: ...)".
// - The result: name "job <id>: N ranks" ("N ranks" when the sessions do not agree on metadata "job_id"), start the earliest
//   start, end the latest end, complete when every rank's session is, dropped_records summed, clock_offset_ns
//   the first rank's, metadata "ranks" ("0,1"), "world_size", "job_id" when the ranks agree. Each rank's
//   strings are interned again into the result's table.
//
// Note [Rank clocks]
// Same-host steady clocks are one clock, so recorded times line up exactly and a collective shows where each
// rank waited for the others. Across hosts the steady clocks have unrelated origins (boot time); converting
// through each session's clock_offset_ns (wall clock) would be as good as NTP, which is too coarse to compare
// op-level timing. A viewer that can talk to the ranks measures instead: it pings each rank's agent and takes
// the round trip that came back soonest (NTP's own estimate, without its wall clock), which puts every rank on
// the viewer's steady clock within half that round trip (tens of us on a LAN, less on one machine). Without a
// measurement the ranks are aligned on their starts: launched ranks start within a few ms of each other, which
// is visible in the timeline but does not claim a precision it does not have.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/prof/store.h"

RT_API_BEGIN

namespace rt::prof {

// A rank's steady clock against the clock the merge puts every rank on (the viewer's), measured by pinging
// the rank (remote::AgentClient::estimate_clock): rank time - viewer time, and how far off that may be.
struct RankClockOffset {
  int64_t offset_ns = 0;
  int64_t error_ns = 0;
};

struct RankSession {
  int rank = 0;
  SessionData data;
  std::optional<RankClockOffset> clock = std::nullopt;  // measured offset, when the rank was pinged
};

enum class RankClock : uint8_t { Auto, Recorded, SessionStart, Estimated };

struct RankMergeOptions {
  RankClock clock = RankClock::Auto;
};

// See the contracts above. Throws rt::ValueError for no sessions or a rank given twice.
SessionData merge_rank_sessions(std::vector<RankSession> ranks, RankMergeOptions options = {});

// The metadata keys a launched rank's session carries (`rtorch launch --store`, docs/launch.md).
inline constexpr const char* kJobIdKey = "job_id";
inline constexpr const char* kRankKey = "rank";
inline constexpr const char* kWorldSizeKey = "world_size";
inline constexpr const char* kRestartCountKey = "restart_count";
// A rank's clock offset measured by whoever recorded it (`rtorch attach --record`): RankClockOffset's two fields
// in ns, as decimal text. merge_rank_sessions uses them for a rank whose RankSession::clock is not set.
inline constexpr const char* kClockOffsetKey = "rank_clock_offset_ns";
inline constexpr const char* kClockErrorKey = "rank_clock_error_ns";

struct LaunchJobRank {
  int rank = 0;
  int64_t session_id = 0;
};

// The sessions one run of a launched job recorded: one per rank (the newest when a rank has several).
struct LaunchJob {
  std::string job_id;
  int restart_count = 0;       // TORCHELASTIC_RESTART_COUNT of the run
  int world_size = 0;          // as the sessions say (the largest when they disagree)
  std::vector<LaunchJobRank> ranks;  // by rank
};

// Groups the sessions that carry job_id and rank metadata by (job id, restart count): jobs in the order of
// their first session, ranks by rank. Sessions without the keys, or whose rank or restart count is not a
// number, are not in any job. A group of one session is a job too (a one-rank launch).
std::vector<LaunchJob> launch_jobs(const std::vector<SessionInfo>& sessions);

}  // namespace rt::prof

RT_API_END
