// The process-wide list of profiling sessions (rt/prof/session_registry.h) that the studio's live panels read:
// sessions appear when they start, can be snapshotted from another thread while recording, keep their final
// data once destroyed when a viewer asked for it (and leave otherwise), and the list stays bounded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "rt/prof/session.h"
#include "rt/prof/session_registry.h"
#include "rt/rt.h"

using rt::prof::RegisteredSession;
using rt::prof::Session;
using rt::prof::SessionRegistry;

namespace {

rt::prof::SessionOptions named(std::string name, int flush_ms = 200) {
  rt::prof::SessionOptions o;
  o.name = std::move(name);
  o.flush_interval = std::chrono::milliseconds(flush_ms);
  return o;
}

std::optional<RegisteredSession> listed(uint64_t id) {
  for (const RegisteredSession& s : SessionRegistry::instance().list())
    if (s.id == id) return s;
  return std::nullopt;
}

uint64_t newest_id() {
  const auto all = SessionRegistry::instance().list();
  REQUIRE_FALSE(all.empty());
  return all.front().id;
}

void run_ops(int n) {
  rt::Tensor a = rt::randn({16, 16});
  for (int i = 0; i < n; ++i) a = rt::relu(rt::matmul(a, a)) * 0.01;
}

size_t op_count(const rt::prof::SessionData& d, const std::string& name) {
  return size_t(std::count_if(d.ops.begin(), d.ops.end(), [&](const rt::prof::OpRecord& o) {
    return d.strings.at(o.name) == name;
  }));
}

// Keeps finished sessions for one test, as the studio's panels ask.
struct KeepFinished {
  size_t before = SessionRegistry::instance().kept_finished_limit();
  explicit KeepFinished(size_t n = SessionRegistry::kCapacity) { SessionRegistry::instance().keep_finished(n); }
  ~KeepFinished() { SessionRegistry::instance().keep_finished(before); }
};

}  // namespace

TEST_CASE("unless a viewer asks, a destroyed session leaves the registry with its data", "[viz]") {
  REQUIRE(SessionRegistry::instance().kept_finished_limit() == 0);  // the default: scripts keep nothing
  uint64_t id = 0;
  {
    Session session(named("script"));
    session.start();
    id = newest_id();
    run_ops(3);
    session.stop();
    CHECK(listed(id));  // listed while the object lives
  }
  CHECK_FALSE(listed(id));
  CHECK(SessionRegistry::instance().snapshot(id) == nullptr);
}

TEST_CASE("keep_finished(n) keeps the newest n destroyed sessions", "[viz]") {
  KeepFinished keep(2);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3; ++i) {
    Session s(named("kept " + std::to_string(i)));
    s.start();
    ids.push_back(newest_id());
    s.stop();
  }
  CHECK_FALSE(listed(ids[0]));
  CHECK(listed(ids[1]));
  CHECK(listed(ids[2]));
  SessionRegistry::instance().keep_finished(1);  // lowering it lets the oldest go at once
  CHECK_FALSE(listed(ids[1]));
  CHECK(SessionRegistry::instance().snapshot(ids[2]) != nullptr);
}

TEST_CASE("a session is listed while it records and its snapshot grows from another thread", "[viz]") {
  const uint64_t before = SessionRegistry::instance().generation();
  rt::prof::SessionOptions options = named("live cell", 10);
  options.record_shapes = true;
  Session session(options);
  session.start();
  CHECK(SessionRegistry::instance().generation() != before);
  const uint64_t id = newest_id();
  const auto entry = listed(id);
  REQUIRE(entry);
  CHECK(entry->name == "live cell");
  CHECK(entry->recording);
  CHECK(entry->alive);
  CHECK(entry->start_ns > 0);

  run_ops(5);
  std::shared_ptr<const rt::prof::SessionData> seen;
  std::thread reader([&] { seen = SessionRegistry::instance().snapshot(id); });
  reader.join();
  REQUIRE(seen);
  CHECK(seen->name == "live cell");
  CHECK(op_count(*seen, "matmul") == 5);
  CHECK_FALSE(seen->complete);

  run_ops(3);
  CHECK(op_count(*SessionRegistry::instance().snapshot(id), "matmul") == 8);
  session.stop();
  const auto stopped = listed(id);
  REQUIRE(stopped);
  CHECK_FALSE(stopped->recording);
  CHECK(stopped->alive);
  CHECK(stopped->counts.ops >= 8);
  CHECK(SessionRegistry::instance().snapshot(id)->complete);
}

TEST_CASE("snapshots taken concurrently with recording never tear", "[viz]") {
  Session session(named("concurrent", 5));
  session.start();
  const uint64_t id = newest_id();
  std::atomic<bool> done{false};
  size_t last = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!done.load()) {
      auto d = SessionRegistry::instance().snapshot(id);
      const size_t n = op_count(*d, "matmul");
      monotonic = monotonic && n >= last;
      last = n;
    }
  });
  run_ops(200);
  done = true;
  reader.join();
  session.stop();
  CHECK(monotonic);
  CHECK(op_count(session.data(), "matmul") == 200);
}

TEST_CASE("a destroyed session keeps its final data and an unnamed one gets a name", "[viz]") {
  KeepFinished keep;
  uint64_t id = 0;
  {
    Session session;
    session.start();
    id = newest_id();
    run_ops(4);
    session.counter("loss", 0.5);
    session.stop();
  }
  const auto entry = listed(id);
  REQUIRE(entry);
  CHECK_FALSE(entry->alive);
  CHECK_FALSE(entry->recording);
  CHECK(entry->name == "session " + std::to_string(id));
  CHECK(entry->counts.counters == 1);
  const auto kept = SessionRegistry::instance().snapshot(id);
  REQUIRE(kept);
  CHECK(kept->complete);
  CHECK(op_count(*kept, "matmul") == 4);
  REQUIRE(kept->counters.size() == 1);
  CHECK(kept->counters[0].value == 0.5);
}

TEST_CASE("a session destroyed while recording is stopped and kept", "[viz]") {
  KeepFinished keep;
  uint64_t id = 0;
  {
    Session session(named("interrupted"));
    session.start();
    id = newest_id();
    run_ops(2);
  }
  const auto kept = SessionRegistry::instance().snapshot(id);
  REQUIRE(kept);
  CHECK(kept->complete);
  CHECK(op_count(*kept, "matmul") == 2);
}

TEST_CASE("the registry is bounded: the oldest finished sessions leave first", "[viz]") {
  KeepFinished keep;
  Session keep_alive(named("still open"));
  keep_alive.start();
  const uint64_t alive_id = newest_id();
  keep_alive.stop();
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < SessionRegistry::kCapacity + 3; ++i) {
    Session s(named("run " + std::to_string(i)));
    s.start();
    ids.push_back(newest_id());
    s.stop();
  }
  const auto all = SessionRegistry::instance().list();
  CHECK(all.size() == SessionRegistry::kCapacity);
  // Newest first, ids count up and are never reused.
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].id > all[i].id);
  CHECK(all.front().id == ids.back());
  CHECK(all.front().name == "run " + std::to_string(SessionRegistry::kCapacity + 2));
  // Destroyed sessions were evicted before the stopped one that is still alive.
  CHECK(listed(alive_id));
  CHECK_FALSE(listed(ids.front()));
  CHECK(SessionRegistry::instance().snapshot(ids.front()) == nullptr);
  CHECK(SessionRegistry::instance().snapshot(alive_id) != nullptr);
}

TEST_CASE("a session that never started is not listed", "[viz]") {
  const auto before = SessionRegistry::instance().list();
  const uint64_t generation = SessionRegistry::instance().generation();
  { Session never(named("never started")); }
  CHECK(SessionRegistry::instance().list().size() == before.size());
  CHECK(SessionRegistry::instance().generation() == generation);
  CHECK(SessionRegistry::instance().snapshot(0) == nullptr);
}
