// SessionMirror: a session recorded in this process grows a source exactly as AgentClient grows its mirror
// (snapshot_since + append_delta, a reset when the session stops); published after every read, it is read by two
// readers at different paces, which end up holding what the source holds, record for record.
#include <catch2/catch.hpp>

#include "attach/session_mirror.h"
#include "rt/prof/session.h"
#include "rt/rt.h"

using namespace rt;
using rt::studio::SessionMirror;

namespace {

struct Reader {
  prof::SnapshotCursor cursor;
  prof::SessionData data;
  int resets = 0;
  void read(const SessionMirror& m) {
    prof::SessionDelta d = m.read_since(cursor);
    cursor = d.cursor;
    if (d.reset) {
      data = std::move(d.records);
      ++resets;
    } else {
      prof::append_delta(data, std::move(d));
    }
  }
};

std::vector<std::string> op_names(const prof::SessionData& d) {
  std::vector<std::string> names;
  for (const auto& op : d.ops) names.push_back(d.strings.at(op.name));
  return names;
}

void require_same(const prof::SessionData& a, const prof::SessionData& b) {
  REQUIRE(op_names(a) == op_names(b));
  REQUIRE(a.memory.size() == b.memory.size());
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].step == b.steps[i].step);
    CHECK(a.steps[i].end_ns == b.steps[i].end_ns);
  }
  REQUIRE(a.strings.all() == b.strings.all());
  REQUIRE(a.threads.size() == b.threads.size());
  REQUIRE(a.name == b.name);
  REQUIRE(a.complete == b.complete);
}

void train_step() {
  auto w = rt::randn({16, 16}).requires_grad_(true);
  auto loss = rt::matmul(rt::randn({8, 16}), w).relu().sum();
  loss.backward();
}

}  // namespace

TEST_CASE("a mirror read by two readers at their own pace gives each the source's records") {
  prof::SessionOptions options;
  options.name = "mirrored";
  options.profile_memory = true;
  prof::Session session(options);
  session.start();

  prof::SessionData source;  // what an AgentClient would hold
  prof::SnapshotCursor source_cursor;
  uint64_t resets = 0;
  auto pull = [&] {
    prof::SessionDelta d = session.snapshot_since(source_cursor);
    source_cursor = d.cursor;
    if (d.reset) {
      source = std::move(d.records);
      ++resets;
    } else {
      prof::append_delta(source, std::move(d));
    }
  };

  SessionMirror mirror;
  Reader every_time, now_and_then;
  for (int round = 0; round < 9; ++round) {
    train_step();
    session.step();
    pull();
    mirror.publish(source, resets);
    every_time.read(mirror);
    if (round % 3 == 2) now_and_then.read(mirror);
    require_same(every_time.data, source);
  }
  now_and_then.read(mirror);
  require_same(now_and_then.data, source);
  CHECK(every_time.resets == 1);
  CHECK(now_and_then.resets == 1);
  REQUIRE(source.steps.size() >= 9);
  CHECK(mirror.counts().ops == source.ops.size());
  CHECK(mirror.counts().last_step_ns > 0);

  // Nothing new: an empty increment that keeps the header.
  const prof::SessionDelta idle = mirror.read_since(every_time.cursor);
  CHECK_FALSE(idle.reset);
  CHECK(idle.records.ops.empty());
  CHECK_FALSE(idle.replaces_open_step);
  CHECK(idle.records.name == "mirrored");

  // stop() sorts the session: the source is replaced (a reset), and so is every reader's data.
  session.stop();
  pull();
  mirror.publish(source, resets);
  every_time.read(mirror);
  now_and_then.read(mirror);
  CHECK(every_time.resets == 2);
  CHECK(now_and_then.resets == 2);
  require_same(every_time.data, session.data());
  require_same(now_and_then.data, session.data());
  CHECK(mirror.counts().complete);
}

TEST_CASE("a mirror refuses a cursor that claims more than it holds") {
  prof::SessionData grown;
  grown.name = "small";
  grown.ops.push_back({.start_ns = 1, .end_ns = 2, .thread = 1, .name = grown.strings.intern("relu")});
  SessionMirror mirror;
  mirror.publish(grown, 0);
  prof::SnapshotCursor c = mirror.read_since({}).cursor;
  c.ops += 5;
  REQUIRE_THROWS_WITH(mirror.read_since(c), Catch::Contains("more records than the mirror holds"));
}

TEST_CASE("a mirror copies a source that shrank (replaced without a reset count) whole") {
  prof::SessionData grown;
  for (int i = 0; i < 3; ++i) grown.ops.push_back({.start_ns = i, .end_ns = i + 1, .thread = 1, .name = grown.strings.intern("op")});
  SessionMirror mirror;
  mirror.publish(grown, 0);
  Reader r;
  r.read(mirror);
  grown.ops.resize(1);
  mirror.publish(grown, 0);
  r.read(mirror);
  CHECK(r.resets == 2);
  CHECK(r.data.ops.size() == 1);
}
