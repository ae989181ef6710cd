// Reading a recording session piece by piece (rt/prof/session_delta.h): a default cursor reads everything,
// increments carry only what was drained since, their concatenation equals snapshot(), late outer ops and the
// open step come out right, stop() turns the next read into a reset (not with sort_at_stop = false), the registry reads destroyed sessions,
// bad cursors are reported, and a reader thread follows a recording thread (run under TSan by test.sh --full).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "rt/prof/counters.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/session_delta.h"
#include "rt/prof/session_registry.h"
#include "rt/rt.h"

using namespace rt;
using rt::prof::Session;
using rt::prof::SessionData;
using rt::prof::SessionDelta;
using rt::prof::SnapshotCursor;
using rt::prof::StringId;

namespace {

prof::SessionOptions options(int flush_ms = 200) {
  prof::SessionOptions o;
  o.profile_memory = true;
  o.record_shapes = true;
  o.cupti = prof::CuptiMode::Off;
  o.flush_interval = std::chrono::milliseconds(flush_ms);
  return o;
}

// A reader as the studio keeps one: its data, its cursor, and how many reads were resets.
struct Reader {
  SessionData data;
  SnapshotCursor cursor;
  int resets = 0;
  SessionDelta last;

  void read(const Session& s) { apply(s.snapshot_since(cursor)); }
  void apply(SessionDelta delta) {
    cursor = delta.cursor;
    if (delta.reset) {
      ++resets;
      data = delta.records;
    } else {
      last = delta;
      prof::append_delta(data, std::move(delta));
    }
  }
};

using OpKey = std::tuple<int64_t, int64_t, uint64_t, std::string, std::string, int32_t, int64_t, int>;
using MemoryKey = std::tuple<int64_t, uint64_t, int64_t, int64_t, int32_t, int, std::string>;
using CounterKey = std::tuple<int64_t, std::string, double>;

// Records with their strings resolved, sorted, so two SessionData compare by content whatever their order.
std::vector<OpKey> ops_of(const SessionData& d) {
  std::vector<OpKey> out;
  for (const auto& op : d.ops)
    out.emplace_back(op.start_ns, op.end_ns, op.thread, d.strings.at(op.name), d.strings.at(op.input_shapes), op.depth,
                     op.sequence_nr, int(op.kind));
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<MemoryKey> memory_of(const SessionData& d) {
  std::vector<MemoryKey> out;
  for (const auto& m : d.memory)
    out.emplace_back(m.time_ns, m.address, m.bytes, m.total_allocated, m.device, int(m.category), d.strings.at(m.op));
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<CounterKey> counters_of(const SessionData& d) {
  std::vector<CounterKey> out;
  for (const auto& c : d.counters) out.emplace_back(c.time_ns, d.strings.at(c.name), c.value);
  std::sort(out.begin(), out.end());
  return out;
}

void require_same_records(const SessionData& a, const SessionData& b) {
  REQUIRE(ops_of(a) == ops_of(b));
  REQUIRE(memory_of(a) == memory_of(b));
  REQUIRE(counters_of(a) == counters_of(b));
  REQUIRE(a.gpu.size() == b.gpu.size());
  REQUIRE(a.threads.size() == b.threads.size());
  REQUIRE(a.strings.all() == b.strings.all());
}

template <typename Record, typename Less>
bool sorted_in(const std::vector<Record>& v, size_t from, size_t to, Less less) {
  return std::is_sorted(v.begin() + ptrdiff_t(from), v.begin() + ptrdiff_t(to), less);
}

void some_work(int n) {
  auto a = ones({8, 8});
  for (int i = 0; i < n; ++i) a = relu(a * 0.5);
}

}  // namespace

TEST_CASE("a default cursor reads the whole session as snapshot() does, then increments follow") {
  Session s(options());
  s.start();
  some_work(5);
  s.counter("loss", 1.0);
  Reader r;
  r.read(s);
  REQUIRE(r.resets == 1);
  const SessionData snap = s.snapshot();
  REQUIRE_FALSE(r.data.ops.empty());
  require_same_records(r.data, snap);
  REQUIRE(r.data.steps.size() == 1);  // the open step, as snapshot() lists it
  REQUIRE(r.cursor.open_step);

  // Nothing new: an increment with no records, the open step replaced by its later self.
  r.read(s);
  REQUIRE(r.resets == 1);
  REQUIRE(r.last.records.ops.empty());
  REQUIRE(r.last.new_strings.empty());
  REQUIRE(r.last.replaces_open_step);
  REQUIRE(r.last.records.steps.size() == 1);
  REQUIRE(r.data.steps.size() == 1);
  s.stop();
}

TEST_CASE("increments carry only what was drained since the cursor, concatenated they equal snapshot()") {
  Session s(options());
  s.start();
  Reader r;
  r.read(s);
  size_t read_ops = r.data.ops.size();
  for (int round = 0; round < 6; ++round) {
    const size_t before = s.snapshot().ops.size();
    some_work(3 + round);
    s.counter(round % 2 ? "loss" : "lr", double(round));
    if (round == 3) {
      prof::RecordFunction range("a name first seen in round 3");
      some_work(1);
    }
    const size_t after = s.snapshot().ops.size();  // snapshot() drains too: the next read sees what it drained
    r.read(s);
    REQUIRE(r.resets == 1);
    INFO("round " << round);
    REQUIRE(r.last.records.ops.size() == after - before);
    REQUIRE(r.data.ops.size() == read_ops + (after - before));
    read_ops = r.data.ops.size();
    // Each increment is sorted as snapshot() sorts: ops by start, memory and counters by time.
    const size_t first_op = r.data.ops.size() - r.last.records.ops.size();
    REQUIRE(sorted_in(r.data.ops, first_op, r.data.ops.size(),
                      [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; }));
    REQUIRE(std::is_sorted(r.last.records.memory.begin(), r.last.records.memory.end(),
                           [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; }));
    REQUIRE_FALSE(r.last.records.memory.empty());
    REQUIRE(r.last.records.counters.size() == 1);
    if (round == 3) {
      REQUIRE(r.last.new_strings.size() == 1);
      REQUIRE(r.last.new_strings[0] == "a name first seen in round 3");
    }
    require_same_records(r.data, s.snapshot());
  }
  s.stop();
}

TEST_CASE("an outer op that ends after its children were read arrives in a later increment") {
  Session s(options());
  s.start();
  Reader r;
  r.read(s);
  int64_t children_end = 0;
  {
    prof::RecordFunction outer("outer");
    some_work(4);
    r.read(s);  // the children, not the outer range: it has not ended
    REQUIRE_FALSE(r.data.ops.empty());
    for (const auto& op : r.data.ops) {
      REQUIRE(r.data.strings.at(op.name) != "outer");
      children_end = std::max(children_end, op.end_ns);
    }
  }
  r.read(s);
  REQUIRE(r.last.records.ops.size() == 1);
  const auto& outer = r.data.ops.back();
  REQUIRE(r.data.strings.at(outer.name) == "outer");
  REQUIRE(outer.start_ns < r.data.ops.front().start_ns);  // earlier than what was read before it
  REQUIRE(outer.end_ns >= children_end);
  require_same_records(r.data, s.snapshot());
  s.stop();
}

TEST_CASE("steps: each read ends with the open step, and the next one replaces it") {
  Session s(options());
  s.start();
  Reader r;
  r.read(s);
  REQUIRE(r.data.steps.size() == 1);
  const int64_t first_end = r.data.steps[0].end_ns;
  s.step();
  s.step();
  r.read(s);
  REQUIRE(r.last.replaces_open_step);
  REQUIRE(r.last.records.steps.size() == 3);  // steps 0 and 1 closed, step 2 open
  REQUIRE(r.data.steps.size() == 3);
  for (int64_t i = 0; i < 3; ++i) REQUIRE(r.data.steps[size_t(i)].step == i);
  REQUIRE(r.data.steps[0].end_ns >= first_end);
  REQUIRE(r.data.steps[1].start_ns == r.data.steps[0].end_ns);
  const SessionData snap = s.snapshot();
  REQUIRE(snap.steps.size() == 3);
  for (size_t i = 0; i < 2; ++i) {
    REQUIRE(snap.steps[i].start_ns == r.data.steps[i].start_ns);
    REQUIRE(snap.steps[i].end_ns == r.data.steps[i].end_ns);
  }
  s.stop();
}

TEST_CASE("a backward's graph comes once, when it changed") {
  Session s(options());
  s.start();
  Reader r;
  r.read(s);
  REQUIRE(r.data.graphs.empty());
  auto w = ones({3, 3}).requires_grad_(true);
  auto backward = [&] {
    auto loss = (matmul(w, w) * 2.0).sum();
    loss.backward();
  };
  backward();
  r.read(s);
  REQUIRE(r.last.graphs_changed);
  REQUIRE(r.data.graphs.size() == 1);
  r.read(s);
  REQUIRE_FALSE(r.last.graphs_changed);
  backward();
  r.read(s);
  REQUIRE(r.last.graphs_changed);
  REQUIRE(r.data.graphs.size() == 2);  // the first and the latest
  REQUIRE(r.data.graphs[1].backward_index == 1);
  backward();
  r.read(s);
  REQUIRE(r.last.graphs_changed);
  REQUIRE(r.data.graphs.size() == 2);
  REQUIRE(r.data.graphs[1].backward_index == 2);
  s.stop();
}

TEST_CASE("stop() sorts the session: the next read is a reset to the sorted records, then reads are empty") {
  auto& registry = prof::SessionRegistry::instance();
  registry.keep_finished(2);
  uint64_t id = 0;
  Reader r;
  {
    prof::SessionOptions o = options();
    o.name = "delta after stop";
    Session s(o);
    s.start();
    for (const auto& e : registry.list())
      if (e.name == "delta after stop") id = e.id;
    REQUIRE(id != 0);
    {
      prof::RecordFunction outer("outer");
      some_work(3);
      r.apply(*registry.read_since(id, r.cursor));
    }
    some_work(2);
    r.apply(*registry.read_since(id, r.cursor));
    REQUIRE(r.resets == 1);
    s.stop();
    r.apply(*registry.read_since(id, r.cursor));
    REQUIRE(r.resets == 2);
    REQUIRE(r.data.complete);
    REQUIRE(std::is_sorted(r.data.ops.begin(), r.data.ops.end(),
                           [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; }));
    require_same_records(r.data, s.data());
    REQUIRE(r.data.steps.size() == s.data().steps.size());
    r.apply(*registry.read_since(id, r.cursor));
    REQUIRE(r.resets == 2);
    REQUIRE(r.last.records.ops.empty());
    REQUIRE_FALSE(r.last.replaces_open_step);
  }
  // Destroyed and kept by the registry: the reader that has everything reads nothing new ...
  const SessionDelta kept = *registry.read_since(id, r.cursor);
  REQUIRE_FALSE(kept.reset);
  REQUIRE(kept.records.ops.empty());
  REQUIRE(kept.records.complete);
  // ... and a new reader gets the whole kept session.
  Reader fresh;
  fresh.apply(*registry.read_since(id, SnapshotCursor{}));
  REQUIRE(fresh.resets == 1);
  require_same_records(fresh.data, r.data);
  registry.keep_finished(0);
  REQUIRE_FALSE(registry.read_since(id, r.cursor).has_value());
}

TEST_CASE("with sort_at_stop = false, the read after stop() is an increment that completes the session") {
  prof::SessionOptions o = options();
  o.sort_at_stop = false;
  Session s(o);
  s.start();
  Reader r;
  some_work(3);
  r.read(s);
  REQUIRE(r.resets == 1);
  some_work(2);
  s.step();
  some_work(1);
  r.read(s);
  s.stop();
  r.read(s);
  REQUIRE(r.resets == 1);  // no reset: stop() did not reorder what the cursor counts
  REQUIRE(r.data.complete);
  REQUIRE(r.last.records.complete);
  REQUIRE(r.data.steps.size() == s.data().steps.size());
  require_same_records(r.data, s.snapshot());  // snapshot() is still sorted; the contents are the same
  REQUIRE(r.data.ops.size() == s.data().ops.size());
  r.read(s);
  REQUIRE(r.last.records.ops.empty());
}

TEST_CASE("cursors of another session or ahead of the session, and mismatched data, are reported") {
  Session a(options());
  a.start();
  some_work(2);
  Reader ra;
  ra.read(a);
  a.stop();
  Session b(options());
  b.start();
  REQUIRE_THROWS_WITH(b.snapshot_since(ra.cursor), Catch::Contains("belongs to another session"));
  Reader rb;
  rb.read(b);
  SnapshotCursor ahead = rb.cursor;
  ahead.ops += 1000;
  REQUIRE_THROWS_WITH(b.snapshot_since(ahead), Catch::Contains("ahead of the session") && Catch::Contains("1000"));

  // append_delta: a reset is not appended, and data that does not end where the delta continues is refused.
  REQUIRE_THROWS_WITH(prof::append_delta(rb.data, b.snapshot_since(SnapshotCursor{})), Catch::Contains("reset"));
  some_work(1);
  { prof::RecordFunction r("a new name"); }
  SessionDelta delta = b.snapshot_since(rb.cursor);
  REQUIRE_FALSE(delta.new_strings.empty());
  SessionData other = rb.data;  // a reader whose data has a string this cursor did not read
  other.strings.intern("unrelated");
  REQUIRE_THROWS_WITH(prof::append_delta(other, SessionDelta(delta)), Catch::Contains("new strings start at id"));
  REQUIRE(other.ops.size() == rb.data.ops.size());
  SessionData no_steps;
  for (size_t i = 1; i < rb.data.strings.size(); ++i) no_steps.strings.intern(rb.data.strings.at(StringId(i)));
  REQUIRE_THROWS_WITH(prof::append_delta(no_steps, SessionDelta(delta)), Catch::Contains("no step"));
  prof::append_delta(rb.data, std::move(delta));
  REQUIRE(rb.data.strings.at(rb.data.ops.back().name) == "a new name");
  b.stop();
}

TEST_CASE("a reader thread follows a recording thread: every record arrives exactly once") {
  Session s(options(5));  // frequent flushes interleave with the reads
  s.start();
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::thread recorder([&] {
    prof::set_thread_name("recorder");
    auto a = ones({16});
    for (int i = 0; i < 3000; ++i) {
      if (i == 1000 || i == 2000) {  // reads happen while recording, however busy the machine
        const int seen = reads.load();
        while (reads.load() < seen + 2) std::this_thread::yield();
      }
      prof::RecordFunction iteration("iteration");
      a = relu(a * 0.99);
      if (i % 50 == 0) (void)prof::counter("progress", double(i));
    }
    done = true;
  });
  Reader r;
  while (!done.load()) {
    r.read(s);
    ++reads;
    std::this_thread::yield();
  }
  recorder.join();
  r.read(s);
  REQUIRE(r.resets == 1);
  REQUIRE(reads.load() >= 4);
  const SessionData snap = s.snapshot();
  require_same_records(r.data, snap);
  size_t iterations = 0;
  for (const auto& op : r.data.ops) iterations += r.data.strings.at(op.name) == "iteration";
  REQUIRE(iterations == 3000);
  REQUIRE(r.data.counters.size() == 60);
  s.stop();
}
