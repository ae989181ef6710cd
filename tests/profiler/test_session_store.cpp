// A recording Session streaming into the SQLite store: partial sessions readable while
// recording, the finished session equal to data(), a killed process leaving an incomplete but
// readable session, bounded memory with keep_in_memory = false, start-up errors, and a store
// that stops taking writes mid-session.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "collect/thread_buffer.h"
#include "store/sqlite_connection.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/prof/summary.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using rt::prof::Session;
using rt::prof::SessionData;
using rt::prof::Store;

namespace {

namespace fs = std::filesystem;

constexpr const char* kChildStoreEnv = "RT_TEST_SESSION_STORE_CHILD";
constexpr const char* kChildTestName = "session store child: records until killed";

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("rt_session_store_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

prof::SessionOptions store_options(const fs::path& db) {
  prof::SessionOptions o;
  o.record_shapes = o.profile_memory = o.with_stack = true;
  o.cupti = prof::CuptiMode::Off;
  o.name = "streamed";
  o.store_path = db.string();
  o.flush_interval = std::chrono::milliseconds(10);
  return o;
}

// Polls until `done` holds; false after `limit` (a liveness bound, not a timing assertion).
bool eventually(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void train_step(Session& s) {
  auto net = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
                                              std::make_shared<nn::Linear>(8, 3));
  optim::SGD opt(net->parameters(), {.lr = 0.1, .momentum = 0.9});
  auto x = testing::random({2, 4}, kFloat32, -1, 1, 1);
  auto target = testing::random_int({2}, 0, 3, 2);
  prof::RecordFunction r("train_step");
  ModuleScope root("net");
  opt.zero_grad();
  auto loss = cross_entropy((*net)(x), target);
  loss.backward();
  opt.step();
  s.counter("loss", loss.item<double>());
}

// Records with their strings resolved, in one order, so that sessions whose StringIds and
// record order differ (the store keeps flush order, data() sorts) compare equal.
using OpRow = std::tuple<int64_t, int64_t, uint64_t, std::string, std::string, std::string, std::string, int64_t,
                         uint64_t, int32_t, int>;
using MemoryRow = std::tuple<int64_t, uint64_t, uint64_t, int64_t, int64_t, int32_t, int, std::string>;
using CounterRow = std::tuple<int64_t, std::string, double>;
using StepRow = std::tuple<int64_t, int64_t, int64_t>;
using ThreadRow = std::tuple<uint64_t, uint32_t, std::string>;

template <typename Row>
std::vector<Row> sorted(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<OpRow> op_rows(const SessionData& d) {
  std::vector<OpRow> out;
  for (const auto& r : d.ops)
    out.emplace_back(r.start_ns, r.end_ns, r.thread, d.strings.at(r.name), d.strings.at(r.module),
                     d.strings.at(r.input_shapes), d.strings.at(r.input_dtypes), r.sequence_nr, r.correlation_id,
                     r.depth, int(r.kind));
  return sorted(out);
}
std::vector<MemoryRow> memory_rows(const SessionData& d) {
  std::vector<MemoryRow> out;
  for (const auto& r : d.memory)
    out.emplace_back(r.time_ns, r.thread, r.address, r.bytes, r.total_allocated, r.device, int(r.category),
                     d.strings.at(r.op));
  return sorted(out);
}
std::vector<CounterRow> counter_rows(const SessionData& d) {
  std::vector<CounterRow> out;
  for (const auto& r : d.counters) out.emplace_back(r.time_ns, d.strings.at(r.name), r.value);
  return sorted(out);
}
std::vector<StepRow> step_rows(const SessionData& d) {
  std::vector<StepRow> out;
  for (const auto& r : d.steps) out.emplace_back(r.step, r.start_ns, r.end_ns);
  return sorted(out);
}
std::vector<ThreadRow> thread_rows(const SessionData& d) {
  std::vector<ThreadRow> out;
  for (const auto& r : d.threads) out.emplace_back(r.thread, r.os_tid, d.strings.at(r.name));
  return sorted(out);
}

size_t count_named(const SessionData& d, const std::string& name) {
  size_t n = 0;
  for (const auto& op : d.ops) n += d.strings.at(op.name) == name;
  return n;
}

size_t this_thread_segments() {
  prof::collect::ThreadBuffer* b = prof::collect::this_thread_buffer();
  REQUIRE(b != nullptr);
  std::lock_guard<std::mutex> lk(b->mu);
  return b->segment_count();
}

}  // namespace

TEST_CASE("a session with a store path streams while recording and finishes equal to data()") {
  TempDir dir;
  const fs::path db = dir.path / "runs.sqlite";
  Session s(store_options(db));
  CHECK(s.store_session_id() == 0);
  s.start();
  const int64_t id = s.store_session_id();
  REQUIRE(id > 0);

  train_step(s);
  s.step();
  {
    Store reader = Store::open(db);
    // Another connection sees the session grow, incomplete, while it records.
    REQUIRE(eventually([&] { return reader.session_info(id).op_count > 0; }));
    const prof::SessionInfo partial = reader.session_info(id);
    CHECK_FALSE(partial.complete);
    CHECK(partial.name == "streamed");
    const SessionData loaded = reader.load_session(id);
    CHECK_FALSE(loaded.complete);
    CHECK(loaded.start_ns > 0);
    CHECK(loaded.ops.size() == size_t(partial.op_count));
    CHECK(count_named(loaded, "train_step") == 1);
    CHECK(loaded.metadata.at("record_shapes") == "true");
    CHECK_FALSE(reader.top_ops(id).empty());
  }
  // A snapshot drains too; what it took still reaches the store.
  train_step(s);
  const SessionData snap = s.snapshot();
  CHECK(count_named(snap, "train_step") == 2);
  train_step(s);
  s.stop();

  const SessionData& d = s.data();
  REQUIRE(d.complete);
  CHECK(count_named(d, "train_step") == 3);
  CHECK(d.steps.size() == 2);
  const prof::RecordCounts counts = s.counts();
  CHECK(counts.ops == d.ops.size());
  CHECK(counts.memory == d.memory.size());
  CHECK(counts.counters == 3);
  CHECK(counts.steps == 2);

  Store store = Store::open(db);
  REQUIRE(store.list_sessions().size() == 1);
  const SessionData loaded = store.load_session(id);
  CHECK(loaded.complete);
  CHECK(loaded.name == d.name);
  CHECK(loaded.start_ns == d.start_ns);
  CHECK(loaded.end_ns == d.end_ns);
  CHECK(loaded.clock_offset_ns == d.clock_offset_ns);
  CHECK(loaded.dropped_records == d.dropped_records);
  CHECK(loaded.metadata == d.metadata);
  CHECK(thread_rows(loaded) == thread_rows(d));
  CHECK(op_rows(loaded) == op_rows(d));
  CHECK(memory_rows(loaded) == memory_rows(d));
  CHECK(counter_rows(loaded) == counter_rows(d));
  CHECK(step_rows(loaded) == step_rows(d));
  CHECK(loaded.gpu.empty());

  // The finished session's op statistics (read with SQL) match the in-memory ones.
  const auto expected = prof::key_averages(d);
  const auto stored = store.top_ops(id);
  REQUIRE(stored.size() == expected.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    CHECK(stored[i].name == expected[i].name);
    CHECK(stored[i].calls == expected[i].calls);
    CHECK(stored[i].total_ns == expected[i].total_ns);
    CHECK(stored[i].self_ns == expected[i].self_ns);
  }
}

TEST_CASE("the flush thread drains buffers, keep_in_memory = false keeps the session small") {
  TempDir dir;
  const fs::path db = dir.path / "runs.sqlite";
  prof::SessionOptions o = store_options(db);
  o.record_shapes = o.profile_memory = o.with_stack = false;
  o.keep_in_memory = false;
  Session s(o);
  s.start();
  constexpr int kRounds = 40, kRangesPerRound = 5000;  // 200k records: 196 segments if never drained
  size_t most_segments = 0;
  for (int round = 1; round <= kRounds; ++round) {
    for (int i = 0; i < kRangesPerRound; ++i) prof::RecordFunction r("tick");
    // No snapshot(): only the session's own flush thread drains.
    REQUIRE(eventually([&] { return s.counts().ops == uint64_t(round) * kRangesPerRound; }));
    most_segments = std::max(most_segments, this_thread_segments());
  }
  INFO("thread buffer segments at most " << most_segments);
  CHECK(most_segments <= 8);  // one round's worth (5 segments) plus the one being written

  const SessionData snap = s.snapshot();
  CHECK(snap.ops.empty());
  CHECK(snap.memory.empty());
  CHECK(snap.steps.empty());
  CHECK(snap.threads.size() == 1);
  CHECK(snap.strings.size() <= 2);  // "" and the thread's name: no record strings are kept
  s.stop();

  const SessionData& d = s.data();
  CHECK(d.complete);
  CHECK(d.ops.empty());
  CHECK(d.steps.empty());
  CHECK(d.strings.size() <= 2);
  CHECK(s.counts().ops == uint64_t(kRounds) * kRangesPerRound);
  CHECK(s.counts().steps == 1);

  Store store = Store::open(db);
  const prof::SessionInfo info = store.session_info(s.store_session_id());
  CHECK(info.complete);
  CHECK(info.op_count == int64_t(kRounds) * kRangesPerRound);
  const auto top = store.top_ops(info.id);
  REQUIRE(top.size() == 1);
  CHECK(top[0].name == "tick");
  CHECK(top[0].calls == int64_t(kRounds) * kRangesPerRound);
}

// Note [Drain without a store]: ops, memory events and counters go straight into data(), with the
// converter's caches kept across flushes. Each step's records must still carry their own names, shapes and
// modules, and counts() must count what was drained.
TEST_CASE("without a store, records drained over many flushes keep their names, shapes, modules and counts") {
  prof::SessionOptions o;
  o.record_shapes = o.profile_memory = o.with_stack = true;
  o.cupti = prof::CuptiMode::Off;
  o.flush_interval = std::chrono::milliseconds(5);
  Session s(o);
  s.start();
  constexpr int kSteps = 5;
  for (int i = 0; i < kSteps; ++i) {
    const uint64_t drained = s.counts().ops;
    train_step(s);
    s.step();
    REQUIRE(eventually([&] { return s.counts().ops > drained; }));  // a flush after every step
  }
  s.stop();
  const SessionData& d = s.data();
  CHECK(s.counts().ops == d.ops.size());
  CHECK(s.counts().memory == d.memory.size());
  CHECK(s.counts().counters == d.counters.size());
  CHECK(d.counters.size() == kSteps);
  CHECK(!d.memory.empty());
  // The first Linear's op in every step: same shapes, dtypes and module, each interned once.
  std::vector<const prof::OpRecord*> linears;
  for (const auto& r : d.ops) {
    REQUIRE(r.name < d.strings.size());
    REQUIRE(r.input_shapes < d.strings.size());
    if (d.strings.at(r.module) == "net.0" && r.kind == prof::OpKind::Op && r.depth == 1) linears.push_back(&r);
  }
  REQUIRE(linears.size() == kSteps);
  for (const auto* r : linears) {
    CHECK(d.strings.at(r->name) == "linear");
    CHECK(d.strings.at(r->input_shapes) == "[[2, 4], [8, 4], [8]]");
    CHECK(d.strings.at(r->input_dtypes) == "[float32, float32, float32]");
    CHECK(r->input_shapes == linears.front()->input_shapes);
  }
  std::set<std::string> distinct(d.strings.all().begin(), d.strings.all().end());
  CHECK(distinct.size() == d.strings.size());
}

TEST_CASE(kChildTestName, "[.]") {
  // Runs only in the child process the next test starts: it records until it is killed.
  const char* db = std::getenv(kChildStoreEnv);
  if (!db) return;
  prof::SessionOptions o = store_options(db);
  o.name = "killed";
  Session s(o);
  s.start();
  auto a = ones({4});
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < give_up) {  // bounded in case the parent died
    prof::RecordFunction r("before_kill");
    (void)(a + a);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  s.stop();
}

TEST_CASE("a process killed while recording leaves a readable store with the session incomplete") {
  TempDir dir;
  const fs::path db = dir.path / "runs.sqlite";
  // The child execs this test binary afresh (a forked copy would inherit a threaded process's
  // locks), so everything it needs is prepared before fork().
  std::vector<std::string> env_text{std::string(kChildStoreEnv) + "=" + db.string()};
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe", test_name = kChildTestName;
  char* argv[] = {exe.data(), test_name.data(), nullptr};
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
    }
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(127);
  }
  int status = 0;
  bool child_exited = false;
  int64_t seen = 0;
  const bool flushed = eventually([&] {
    if (::waitpid(child, &status, WNOHANG) == child) return child_exited = true;
    if (!fs::exists(db)) return false;
    try {
      Store reader = Store::open(db);
      const auto sessions = reader.list_sessions();
      if (sessions.empty()) return false;
      seen = sessions.front().op_count;
      return seen >= 200;
    } catch (const prof::StoreError&) {  // the child may be creating the schema
      return false;
    }
  });
  if (!child_exited) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  INFO("child status " << status);
  REQUIRE_FALSE(child_exited);
  REQUIRE(flushed);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  Store store = Store::open(db);
  const auto sessions = store.list_sessions();
  REQUIRE(sessions.size() == 1);
  const prof::SessionInfo info = sessions.front();
  CHECK(info.name == "killed");
  CHECK_FALSE(info.complete);
  CHECK(info.op_count >= seen);
  const SessionData loaded = store.load_session(info.id);
  CHECK_FALSE(loaded.complete);
  CHECK(int64_t(loaded.ops.size()) == info.op_count);
  CHECK(loaded.start_ns > 0);
  CHECK(loaded.end_ns >= loaded.start_ns);
  const size_t ranges = count_named(loaded, "before_kill"), adds = count_named(loaded, "add");
  CHECK(ranges > 0);
  CHECK(adds + 1 >= ranges);  // a batch may end between a range and its add
  REQUIRE(loaded.threads.size() == 1);
  CHECK(loaded.strings.at(loaded.threads[0].name) == "main");
  CHECK_FALSE(store.top_ops(info.id).empty());

  // The store takes the next session as usual.
  Session next(store_options(db));
  next.start();
  (void)(ones({2}) + 1.0);
  next.stop();
  Store after = Store::open(db);
  CHECK(after.list_sessions().size() == 2);
  CHECK(after.session_info(next.store_session_id()).complete);
}

TEST_CASE("a store that cannot be opened fails start() with the store's message") {
  TempDir dir;
  SECTION("not a database") {
    const fs::path bad = dir.path / "notes.sqlite";
    std::ofstream(bad) << "these are not the rows you are looking for, not at all, not even close\n";
    Session s(store_options(bad));
    CHECK_THROWS_AS(s.start(), prof::StoreError);
  }
  SECTION("a directory") {
    Session s(store_options(dir.path));
    CHECK_THROWS_WITH(s.start(), Catch::Contains("is a directory"));
  }
  CHECK_FALSE(prof::profiling_active());
  CHECK(event_recorder() == nullptr);
  Session next(store_options(dir.path / "ok.sqlite"));
  CHECK_NOTHROW(next.start());
  next.stop();
}

TEST_CASE("a store that stops taking writes fails stop(), which still stops the session") {
  TempDir dir;
  const fs::path db = dir.path / "runs.sqlite";
  Session s(store_options(db));
  s.start();
  train_step(s);
  {
    // Another writer holds the database past the store's busy timeout (5 s) until stop() is done.
    prof::sqlite::Connection blocker(db, false, 5000);
    blocker.exec("BEGIN EXCLUSIVE");
    train_step(s);
    CHECK_THROWS_WITH(s.stop(), Catch::Contains("is incomplete") && Catch::Contains("records were not written"));
    blocker.exec("ROLLBACK");
  }
  CHECK_FALSE(s.recording());
  CHECK_FALSE(prof::profiling_active());
  const SessionData& d = s.data();  // everything is still in memory
  CHECK(d.complete);
  CHECK(count_named(d, "train_step") == 2);
  Store store = Store::open(db);
  const prof::SessionInfo info = store.session_info(s.store_session_id());
  CHECK_FALSE(info.complete);
  CHECK(info.op_count < int64_t(d.ops.size()));
  // What the session kept can be saved once the store is writable again.
  const int64_t saved = store.save_session(d);
  CHECK(store.session_info(saved).complete);
  CHECK(store.session_info(saved).op_count == int64_t(d.ops.size()));
}

TEST_CASE("options a streaming session cannot use are rejected by start()") {
  prof::SessionOptions o;
  o.cupti = prof::CuptiMode::Off;
  o.keep_in_memory = false;
  Session without_store(o);
  CHECK_THROWS_WITH(without_store.start(), Catch::Contains("needs a store_path"));
  o.keep_in_memory = true;
  o.flush_interval = std::chrono::milliseconds(0);
  Session no_interval(o);
  CHECK_THROWS_WITH(no_interval.start(), Catch::Contains("flush_interval"));
  CHECK_FALSE(prof::profiling_active());
}
