// merge_rank_sessions and launch_jobs (rt/prof/rank_merge.h) on hand-made rank sessions, and several
// processes writing their sessions into one new store at once (as `rtorch launch --store` ranks do).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>

#include "rt/error.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/store.h"
#include "temp_store_dir.h"

using namespace rt::prof;

namespace {

const rt::prof::testing::TempStoreDir scratch("rt_rank_merge_test_");

// One rank's session: threads 1 ("main") and 7 (unnamed), a nested op pair on each, a kernel launched by
// the main thread's op on cuda:0 stream 7, a memory event, a "loss" counter, two steps and a graph.
SessionData rank_session(int rank, const std::string& host, int64_t start) {
  SessionData d;
  d.name = "rank " + std::to_string(rank);
  d.start_ns = start;
  d.end_ns = start + 1000;
  d.clock_offset_ns = 5'000 + rank;
  d.complete = true;
  d.dropped_records = uint64_t(rank);
  d.metadata = {{"host", host}, {"job_id", "j1"}, {"rank", std::to_string(rank)}, {"world_size", "2"}};
  d.threads.push_back({1, uint32_t(100 + rank), d.strings.intern("main")});
  const StringId mm = d.strings.intern("aten::mm");
  const StringId add = d.strings.intern("aten::add");
  d.ops.push_back({.start_ns = start + 10, .end_ns = start + 100, .thread = 1, .name = mm, .sequence_nr = 3,
                   .correlation_id = 1});
  d.ops.push_back({.start_ns = start + 20, .end_ns = start + 50, .thread = 1, .name = add, .sequence_nr = 4, .depth = 1});
  d.ops.push_back({.start_ns = start + 30, .end_ns = start + 60, .thread = 7, .name = d.strings.intern("all_reduce")});
  GpuActivityRecord k;
  k.start_ns = start + 60;
  k.end_ns = start + 90;
  k.kind = GpuActivityKind::Kernel;
  k.device = 0;
  k.stream = 7;
  k.name = d.strings.intern("gemm_kernel");
  k.correlation_id = 11;
  k.external_id = 1;
  d.gpu.push_back(k);
  d.memory.push_back({.time_ns = start + 15, .thread = 1, .address = 0x1000, .bytes = 64, .total_allocated = 64,
                      .op = mm});
  d.counters.push_back({start + 200, d.strings.intern("loss"), 1.5 - rank});
  d.collectives.push_back({.enqueue_ns = start + 30, .start_ns = start + 35, .end_ns = start + 60, .thread = 7,
                           .name = d.strings.intern("all_reduce"), .group = d.strings.intern("default"),
                           .shape = d.strings.intern("[4]"), .dtype = d.strings.intern("float32"), .seq = 1,
                           .numel = 4, .bytes = 16});
  d.steps.push_back({0, start, start + 500});
  d.steps.push_back({1, start + 500, start + 1000});
  GraphRecord g;
  g.time_ns = start + 300;
  g.thread = 1;
  rt::autograd::GraphNodeInfo node;
  node.id = 1;
  node.sequence_nr = 3;
  g.graph.nodes.push_back(node);
  d.graphs.push_back(g);
  return d;
}

std::string thread_name(const SessionData& d, uint64_t thread) {
  for (const ThreadRecord& t : d.threads)
    if (t.thread == thread) return d.strings.at(t.name);
  return "<no thread record>";
}

}  // namespace

TEST_CASE("merge_rank_sessions: thread and stream tracks are prefixed per rank and never collide", "[rank_merge]") {
  std::vector<RankSession> ranks;
  ranks.push_back({1, rank_session(1, "node0", 2000)});  // out of order on purpose
  ranks.push_back({0, rank_session(0, "node0", 1000)});
  const SessionData m = merge_rank_sessions(std::move(ranks));

  std::vector<std::string> names;
  for (const ThreadRecord& t : m.threads) names.push_back(m.strings.at(t.name));
  CHECK(names == std::vector<std::string>{"rank 0 \u00b7 main", "rank 0 \u00b7 thread 7", "rank 0 \u00b7 steps",
                                          "rank 1 \u00b7 main", "rank 1 \u00b7 thread 7", "rank 1 \u00b7 steps"});
  std::set<uint64_t> ids;
  for (const ThreadRecord& t : m.threads) ids.insert(t.thread);
  CHECK(ids.size() == m.threads.size());
  // Every op's thread has a record, and the rank of that record is the op's.
  for (const OpRecord& op : m.ops) {
    const std::string name = thread_name(m, op.thread);
    REQUIRE(name.rfind("rank ", 0) == 0);
    if (m.strings.at(op.name) == "aten::mm")
      CHECK(name == (op.start_ns < 2000 ? "rank 0 \u00b7 main" : "rank 1 \u00b7 main"));
  }
  // One stream per rank, same device, distinct numbers, named after the recorded stream.
  REQUIRE(m.streams.size() == 2);
  CHECK(m.streams[0].device == 0);
  CHECK(m.streams[1].device == 0);
  CHECK(m.streams[0].stream != m.streams[1].stream);
  CHECK(m.strings.at(m.streams[0].name) == "rank 0 \u00b7 cuda:0 stream 7");
  CHECK(m.strings.at(m.streams[1].name) == "rank 1 \u00b7 cuda:0 stream 7");
  REQUIRE(m.gpu.size() == 2);
  CHECK(m.gpu[0].stream == m.streams[0].stream);
  CHECK(m.gpu[1].stream == m.streams[1].stream);
  CHECK(thread_name(m, m.memory[0].thread) == "rank 0 \u00b7 main");
  CHECK(thread_name(m, m.graphs[1].thread) == "rank 1 \u00b7 main");
}

TEST_CASE("merge_rank_sessions: counts are preserved and records stay in time order", "[rank_merge]") {
  std::vector<RankSession> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back({r, rank_session(r, "node0", 1000 + 30 * r)});
  const SessionData m = merge_rank_sessions(ranks);
  CHECK(m.ops.size() == 3 * (3 + 2));  // each rank's ops plus one user range per step
  CHECK(m.gpu.size() == 3);
  CHECK(m.memory.size() == 3);
  CHECK(m.counters.size() == 3);
  CHECK(m.collectives.size() == 3);
  CHECK(m.graphs.size() == 3);
  CHECK(m.steps.empty());
  CHECK(m.threads.size() == 3 * 3);
  CHECK(m.dropped_records == 0 + 1 + 2);
  CHECK(m.complete);
  CHECK(std::is_sorted(m.ops.begin(), m.ops.end(), [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; }));
  CHECK(std::is_sorted(m.gpu.begin(), m.gpu.end(),
                       [](const GpuActivityRecord& a, const GpuActivityRecord& b) { return a.start_ns < b.start_ns; }));
  CHECK(std::is_sorted(m.counters.begin(), m.counters.end(),
                       [](const CounterRecord& a, const CounterRecord& b) { return a.time_ns < b.time_ns; }));
  size_t step_ranges = 0;
  for (const OpRecord& op : m.ops)
    if (op.kind == OpKind::UserRange) {
      ++step_ranges;
      const std::string name = m.strings.at(op.name);
      CHECK((name == "step 0" || name == "step 1"));
      CHECK(thread_name(m, op.thread).ends_with("\u00b7 steps"));
    }
  CHECK(step_ranges == 6);
  std::set<std::string> counters;
  for (const CounterRecord& c : m.counters) counters.insert(m.strings.at(c.name));
  CHECK(counters == std::set<std::string>{"rank 0 \u00b7 loss", "rank 1 \u00b7 loss", "rank 2 \u00b7 loss"});
  CHECK(m.name == "job j1: 3 ranks");
  CHECK(m.metadata.at("ranks") == "0,1,2");
  CHECK(m.metadata.at("world_size") == "2");
  CHECK(m.start_ns == 1000);
  CHECK(m.end_ns == 1060 + 1000);
}

TEST_CASE("merge_rank_sessions: collectives keep their group, follow their thread and carry their rank", "[rank_merge]") {
  std::vector<RankSession> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back({r, rank_session(r, "node0", 1000 + 30 * r)});
  const SessionData m = merge_rank_sessions(ranks);
  REQUIRE(m.collectives.size() == 2);
  for (const CollectiveRecord& c : m.collectives) {
    CHECK(m.strings.at(c.group) == "default");
    CHECK(m.strings.at(c.name) == "all_reduce");
    CHECK(thread_name(m, c.thread) == "rank " + std::to_string(c.rank) + " \u00b7 thread 7");
    CHECK(c.start_ns == 1000 + 30 * c.rank + 35);
  }
  CHECK(m.collectives[0].rank == 0);
  CHECK(m.collectives[1].rank == 1);
  for (const ThreadRecord& t : m.threads) CHECK(m.strings.at(t.name).starts_with("rank " + std::to_string(t.rank) + " "));
}

TEST_CASE("merge_rank_sessions: op-to-kernel and forward-to-backward links stay within a rank", "[rank_merge]") {
  const SessionData m = merge_rank_sessions({{0, rank_session(0, "h", 1000)}, {1, rank_session(1, "h", 1000)}});
  std::set<uint64_t> correlations;
  std::set<int64_t> sequences;
  for (const OpRecord& op : m.ops) {
    if (op.correlation_id != 0) CHECK(correlations.insert(op.correlation_id).second);
    if (op.sequence_nr >= 0) CHECK(sequences.insert(op.sequence_nr).second);
  }
  CHECK(correlations.size() == 2);
  CHECK(sequences.size() == 4);
  for (const GpuActivityRecord& g : m.gpu) {
    const auto launcher = std::find_if(m.ops.begin(), m.ops.end(),
                                       [&](const OpRecord& op) { return op.correlation_id == g.external_id; });
    REQUIRE(launcher != m.ops.end());
    // The launching op is on the same rank's main thread as the kernel's stream.
    const std::string stream = m.strings.at(std::find_if(m.streams.begin(), m.streams.end(), [&](const StreamRecord& s) {
                                                           return s.stream == g.stream;
                                                         })->name);
    CHECK(stream.substr(0, 6) == thread_name(m, launcher->thread).substr(0, 6));
  }
  // A graph node's sequence number still names its own rank's forward op.
  for (const GraphRecord& g : m.graphs) {
    const auto fwd = std::find_if(m.ops.begin(), m.ops.end(), [&](const OpRecord& op) {
      return op.sequence_nr == int64_t(g.graph.nodes[0].sequence_nr);
    });
    REQUIRE(fwd != m.ops.end());
    CHECK(thread_name(m, fwd->thread) == thread_name(m, g.thread));
  }
}

TEST_CASE("merge_rank_sessions: one host keeps recorded times, several hosts align on session starts", "[rank_merge]") {
  SECTION("one host") {
    const SessionData m = merge_rank_sessions({{0, rank_session(0, "node0", 1000)}, {1, rank_session(1, "node0", 5000)}});
    CHECK(m.metadata.at("rank_clock") == "recorded (one host: node0)");
    std::vector<int64_t> all_reduce;
    for (const OpRecord& op : m.ops)
      if (m.strings.at(op.name) == "all_reduce") all_reduce.push_back(op.start_ns);
    CHECK(all_reduce == std::vector<int64_t>{1030, 5030});  // as recorded
    CHECK(m.end_ns == 6000);
  }
  SECTION("two hosts") {
    const SessionData m = merge_rank_sessions({{0, rank_session(0, "node0", 1000)}, {1, rank_session(1, "node1", 5000)}});
    CHECK(m.metadata.at("rank_clock") == "aligned on session starts (hosts: node0, node1)");
    for (const OpRecord& op : m.ops) CHECK(op.start_ns < 2000);  // rank 1 moved by -4000
    CHECK(m.end_ns == 2000);
  }
  SECTION("a session without a host is taken as another machine") {
    SessionData unnamed = rank_session(1, "", 5000);
    unnamed.metadata.erase("host");
    const SessionData m = merge_rank_sessions({{0, rank_session(0, "node0", 1000)}, {1, std::move(unnamed)}});
    CHECK(m.metadata.at("rank_clock") == "aligned on session starts (hosts: node0, not recorded)");
  }
  SECTION("forced either way") {
    const SessionData aligned = merge_rank_sessions({{0, rank_session(0, "h", 1000)}, {1, rank_session(1, "h", 5000)}},
                                                    {.clock = RankClock::SessionStart});
    CHECK(aligned.end_ns == 2000);
    const SessionData recorded = merge_rank_sessions({{0, rank_session(0, "a", 1000)}, {1, rank_session(1, "b", 5000)}},
                                                     {.clock = RankClock::Recorded});
    CHECK(recorded.end_ns == 6000);
    CHECK(recorded.metadata.at("rank_clock") == "recorded (hosts: a, b)");
  }
}

TEST_CASE("merge_rank_sessions: measured clock offsets put every rank on the viewer's clock", "[rank_merge]") {
  // Rank 1's clock reads 7000 ns ahead of the viewer's, rank 0's 500 ns behind; both recorded their all_reduce
  // at the same viewer time, 1530 (rank 0: 1030 on its clock, rank 1: 8530 on its).
  std::vector<RankSession> ranks{{0, rank_session(0, "node0", 1000), RankClockOffset{-500, 20'000}},
                                 {1, rank_session(1, "node1", 8500), RankClockOffset{7000, 35'400}}};
  SECTION("Auto uses them across hosts") {
    const SessionData m = merge_rank_sessions(ranks);
    CHECK(m.metadata.at("rank_clock") == "estimated by ping, within 36 us (hosts: node0, node1)");
    std::vector<int64_t> all_reduce;
    for (const OpRecord& op : m.ops)
      if (m.strings.at(op.name) == "all_reduce") all_reduce.push_back(op.start_ns);
    CHECK(all_reduce == std::vector<int64_t>{1530, 1530});
    CHECK(m.start_ns == 1500);
    CHECK(m.clock_offset_ns == 5'000 - 500);  // epochs stay right: rank 0's offset moved onto the viewer's clock
  }
  SECTION("one host keeps recorded times, which are one clock already") {
    ranks[1].data.metadata["host"] = "node0";
    CHECK(merge_rank_sessions(ranks).metadata.at("rank_clock") == "recorded (one host: node0)");
  }
  SECTION("Estimated needs every rank's offset") {
    ranks[1].clock.reset();
    CHECK_THROWS_WITH(merge_rank_sessions(ranks, {.clock = RankClock::Estimated}),
                      Catch::Contains("needs every rank's measured clock offset"));
    CHECK(merge_rank_sessions(ranks).metadata.at("rank_clock") == "aligned on session starts (hosts: node0, node1)");
  }
}

TEST_CASE("merge_rank_sessions: no sessions or a rank given twice is an error", "[rank_merge]") {
  CHECK_THROWS_AS(merge_rank_sessions({}), rt::ValueError);
  CHECK_THROWS_WITH(merge_rank_sessions({{0, rank_session(0, "h", 0)}, {0, rank_session(0, "h", 0)}}),
                    Catch::Contains("rank 0 is given twice"));
}

TEST_CASE("launch_jobs: groups sessions by job id and restart, ranks in order, newest session per rank", "[rank_merge]") {
  auto info = [](int64_t id, std::unordered_map<std::string, std::string> meta) {
    SessionInfo s;
    s.id = id;
    s.metadata = std::move(meta);
    return s;
  };
  const std::vector<SessionInfo> sessions = {
      info(1, {}),  // a plain `rtorch run --store`
      info(2, {{"job_id", "a"}, {"rank", "1"}, {"world_size", "2"}, {"restart_count", "0"}}),
      info(3, {{"job_id", "a"}, {"rank", "0"}, {"world_size", "2"}, {"restart_count", "0"}}),
      info(4, {{"job_id", "b"}, {"rank", "0"}, {"world_size", "1"}}),
      info(5, {{"job_id", "a"}, {"rank", "0"}, {"world_size", "2"}, {"restart_count", "1"}}),
      info(6, {{"job_id", "a"}, {"rank", "x"}, {"world_size", "2"}}),  // not a rank
      info(7, {{"job_id", "a"}, {"rank", "1"}, {"world_size", "2"}, {"restart_count", "0"}}),  // rank 1 again
  };
  const std::vector<LaunchJob> jobs = launch_jobs(sessions);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].job_id == "a");
  CHECK(jobs[0].restart_count == 0);
  CHECK(jobs[0].world_size == 2);
  REQUIRE(jobs[0].ranks.size() == 2);
  CHECK(jobs[0].ranks[0].rank == 0);
  CHECK(jobs[0].ranks[0].session_id == 3);
  CHECK(jobs[0].ranks[1].rank == 1);
  CHECK(jobs[0].ranks[1].session_id == 7);
  CHECK(jobs[1].job_id == "b");
  CHECK(jobs[1].ranks.size() == 1);
  CHECK(jobs[2].job_id == "a");
  CHECK(jobs[2].restart_count == 1);
  CHECK(jobs[2].ranks.size() == 1);
}

TEST_CASE("Store: four processes record into one new store at once", "[rank_merge][store]") {
  const auto path = scratch.fresh("ranks.sqlite");
  constexpr int kRanks = 4;
  constexpr int kAppends = 40;
  std::vector<pid_t> children;
  for (int r = 0; r < kRanks; ++r) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int code = 0;
      try {
        // Each child creates the file if it is first (the schema migration races the others').
        Store store = Store::open(path);
        SessionWriter w = store.begin_session("rank " + std::to_string(r),
                                              {{"job_id", "j"}, {"rank", std::to_string(r)}, {"world_size", "4"}});
        for (int i = 0; i < kAppends; ++i) {
          SessionData delta = rank_session(r, "h", 1000 * i);
          delta.threads.clear();
          delta.graphs.clear();
          w.append(delta);
        }
        w.finish();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  Store store = Store::open(path);
  const auto sessions = store.list_sessions();
  REQUIRE(sessions.size() == kRanks);
  std::set<std::string> ranks;
  for (const SessionInfo& s : sessions) {
    CHECK(s.complete);
    CHECK(s.op_count == kAppends * 3);
    CHECK(s.memory_count == kAppends);
    ranks.insert(s.metadata.at("rank"));
    const SessionData d = store.load_session(s.id);
    CHECK(d.counters.size() == size_t(kAppends));
    CHECK(d.steps.size() == size_t(2 * kAppends));
  }
  CHECK(ranks == std::set<std::string>{"0", "1", "2", "3"});
  const auto jobs = launch_jobs(sessions);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].ranks.size() == kRanks);
}
