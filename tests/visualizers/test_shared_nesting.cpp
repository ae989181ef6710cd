// One nesting rule (rt/prof/nesting.h, Note [Nesting clamp]) behind the exported Chrome trace, the
// key_averages table and the timeline: the same overlapping, rounded trace gives the same depth, parent,
// clamped end and self time in all three. (Here rather than in tests/profiler: the timeline needs rt_viz.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "rt/prof/chrome_trace.h"
#include "rt/prof/nesting.h"
#include "rt/prof/summary.h"
#include "rt/viz/timeline.h"
#include "test_timeline_fixtures.h"

using namespace rt::prof;
using rt::viz::EventRef;
using rt::viz::EventSource;
using rt::viz::TimelineModel;

namespace {

// One op as recorded, and what the shared rule makes of it.
struct Case {
  const char* name;
  uint64_t thread;
  int64_t start, recorded_end;
  int32_t recorded_depth;
  int64_t end;         // clamped
  int32_t depth;
  const char* parent;  // "" at the top of its thread
  int64_t self_ns;     // clamped duration minus the clamped durations of the direct children
};

// Microsecond-rounded times (PyTorch's legacy exporter) on three threads, in recording order.
const std::vector<Case> kCases = {
    // main: a child outliving its parent, a grandchild outliving both, a slice starting inside the
    // grandchild's recorded interval after their parent ended, and a zero-length slice at a sibling's end.
    {"parent", 1, 1000, 5000, 0, 5000, 0, "", 4000 - 2000},
    {"outlives", 1, 3000, 6000, 1, 5000, 1, "parent", 2000 - 1000},
    {"grandchild", 1, 4000, 7000, 2, 5000, 2, "outlives", 1000},
    {"after", 1, 5500, 8000, 0, 8000, 0, "", 2500},
    {"zero_at_end", 1, 8000, 8000, 0, 8000, 0, "", 0},
    // worker: siblings rounded to the same start (and two to the same interval, which their recorded
    // depth orders although the deeper one was recorded first), a slice starting where one ends, and a
    // negative-length slice.
    {"outer", 2, 10000, 14000, 0, 14000, 0, "", 4000 - 2000 - 1000},
    {"inner_b", 2, 10000, 12000, 2, 12000, 2, "inner_a", 2000},
    {"inner_a", 2, 10000, 12000, 1, 12000, 1, "outer", 2000 - 2000},
    {"sibling", 2, 12000, 13000, 1, 13000, 1, "outer", 1000},
    {"backwards", 2, 13500, 13000, 1, 13500, 1, "outer", 0},
    // autograd: a zero-length slice at its parent's start and a child rounded past its parent's end.
    {"node", 3, 20000, 23000, 0, 23000, 0, "", 3000 - 2000},
    {"zero_first", 3, 20000, 20000, 1, 20000, 1, "node", 0},
    {"mm", 3, 21000, 24000, 1, 23000, 1, "node", 2000},
};
constexpr uint64_t kClamped = 3;  // outlives, grandchild, mm

SessionData overlapping_trace() {
  rt::viz::fixtures::SessionBuilder b;
  b.thread(1, "main").thread(2, "worker").thread(3, "autograd");
  for (const Case& c : kCases) b.op(c.name, c.start, c.recorded_end, c.thread).depth = c.recorded_depth;
  SessionData d = b.data();
  d.start_ns = 0;  // the exported times are then the recorded ones
  d.end_ns = 30000;
  return d;
}

const Case& case_named(const std::string& name) {
  for (const Case& c : kCases)
    if (name == c.name) return c;
  FAIL("no case " << name);
  throw;
}

// Name of the event on the level above that encloses e (levels are sorted by start and do not overlap).
std::string timeline_parent(const TimelineModel& m, const EventRef& e) {
  if (e.level == 0) return "";
  const rt::viz::TrackLevel& up = m.tracks()[e.track].levels[e.level - 1];
  const auto it = std::upper_bound(up.starts.begin(), up.starts.end(), m.start_ns(e));
  REQUIRE(it != up.starts.begin());
  return m.name({e.track, e.level - 1, uint32_t(it - up.starts.begin() - 1)});
}

// Every op of `d` is on the timeline at its case's depth, parent, clamped end and self time.
void require_timeline_agrees(const SessionData& d) {
  const TimelineModel m(std::make_shared<const SessionData>(d));
  for (uint32_t i = 0; i < d.ops.size(); ++i) {
    const Case& c = case_named(d.strings.at(d.ops[i].name));
    INFO("timeline: " << c.name);
    const auto e = m.find(EventSource::Op, i);
    REQUIRE(e);
    CHECK(e->level == uint32_t(c.depth));
    CHECK(timeline_parent(m, *e) == c.parent);
    CHECK(m.start_ns(*e) == c.start);
    CHECK(m.end_ns(*e) == c.end);
    CHECK(m.self_ns(*e) == c.self_ns);
  }
}

// Every row of the table has its case's clamped duration as total and its self time.
void require_table_agrees(const SessionData& d) {
  const std::vector<OpStats> rows = key_averages(d);
  REQUIRE(rows.size() == kCases.size());
  for (const OpStats& row : rows) {
    const Case& c = case_named(row.name);
    INFO("table: " << c.name);
    CHECK(row.calls == 1);
    CHECK(row.total_ns == c.end - c.start);
    CHECK(row.self_ns == c.self_ns);
  }
}

}  // namespace

TEST_CASE("nest_slices sorts parent-first, clamps, and closes a slice where the next one starts") {
  std::vector<NestedSlice> slices = {
      {.start = 0, .end = 100, .index = 0},
      {.start = 50, .end = 150, .index = 1},   // outlives 0: clamped to 100
      {.start = 100, .end = 100, .index = 2},  // zero-length at 0's end: its sibling
      {.start = 0, .end = 0, .index = 3},      // zero-length at 0's start: its child
      {.start = 300, .end = 200, .index = 4},  // end before start: zero-length
      {.start = 400, .end = 500, .index = 5, .rank = 2},
      {.start = 400, .end = 500, .index = 6, .rank = 1},  // same interval, lower rank: the parent
  };
  const NestingRepairs repairs = nest_slices(slices);
  CHECK(repairs.clamped == 1);
  CHECK(repairs.end_before_start == 1);
  std::map<uint32_t, NestedSlice> by_index;
  for (const NestedSlice& s : slices) by_index[s.index] = s;
  auto parent_of = [&](uint32_t i) {
    const int32_t p = by_index[i].parent;
    return p < 0 ? -1 : int64_t(slices[size_t(p)].index);
  };
  CHECK(by_index[1].end == 100);
  CHECK(by_index[1].depth == 1);
  CHECK(parent_of(1) == 0);
  CHECK(by_index[2].depth == 0);
  CHECK(parent_of(3) == 0);
  CHECK(by_index[4].end == 300);
  CHECK(parent_of(5) == 6);
  CHECK(by_index[0].self_ns == 100 - 50);
  CHECK(by_index[6].self_ns == 0);
  for (size_t i = 1; i < slices.size(); ++i) CHECK(slices[i - 1].start <= slices[i].start);
  for (const NestedSlice& s : slices)
    if (s.parent >= 0) CHECK(size_t(s.parent) < size_t(&s - slices.data()));  // parents first
}

TEST_CASE("the exported trace, the table and the timeline nest one overlapping trace the same way") {
  const SessionData d = overlapping_trace();

  SECTION("the shared rule itself") {
    std::map<uint64_t, std::vector<NestedSlice>> by_thread;
    for (uint32_t i = 0; i < d.ops.size(); ++i) by_thread[d.ops[i].thread].push_back(slice_of(d.ops[i], i));
    uint64_t clamped = 0;
    for (auto& [thread, slices] : by_thread) {
      clamped += nest_slices(slices).clamped;
      for (const NestedSlice& s : slices) {
        const Case& c = kCases[s.index];
        INFO("nest_slices: " << c.name);
        CHECK(s.end == c.end);
        CHECK(s.depth == c.depth);
        CHECK(std::string(s.parent < 0 ? "" : kCases[slices[size_t(s.parent)].index].name) == c.parent);
        CHECK(s.self_ns == c.self_ns);
      }
    }
    CHECK(clamped == kClamped);
  }

  SECTION("the Chrome-trace export, read back") {
    ChromeExportStats stats;
    const std::string text = chrome_trace_json(d, &stats);
    CHECK(stats.clamped_ops == kClamped);
    CHECK(text.find("\"ts\":3.000,\"dur\":2.000") != std::string::npos);  // outlives: 3000..6000 -> 3000..5000
    CHECK(text.find("\"ts\":4.000,\"dur\":1.000") != std::string::npos);  // grandchild: 4000..7000 -> 4000..5000
    const ChromeImport back = import_chrome_trace_text(text, "overlapping");
    CHECK(back.report.clamped_slices == 0);  // the exported slices already nest
    REQUIRE(back.session.ops.size() == kCases.size());
    std::map<uint64_t, std::vector<std::string>> path;  // per thread: the enclosing ops, outermost first
    for (const OpRecord& op : back.session.ops) {  // sorted by start, parents first
      const Case& c = case_named(back.session.strings.at(op.name));
      INFO("exported: " << c.name);
      CHECK(op.start_ns == c.start);
      CHECK(op.end_ns == c.end);
      CHECK(op.depth == c.depth);
      std::vector<std::string>& open = path[op.thread];
      open.resize(std::min(open.size(), size_t(op.depth)));
      CHECK((open.empty() ? std::string() : open.back()) == c.parent);
      open.push_back(c.name);
    }
    // The table and the timeline of the read-back trace are those of the original.
    require_table_agrees(back.session);
    require_timeline_agrees(back.session);
  }

  SECTION("the key_averages table") {
    require_table_agrees(d);
    const std::vector<OpStats> rows = key_averages(d);
    const auto outlives = std::find_if(rows.begin(), rows.end(), [](const OpStats& r) { return r.name == "outlives"; });
    REQUIRE(outlives != rows.end());
    CHECK(outlives->total_ns == 2000);  // the clamped child counts only the part inside its parent
    CHECK(outlives->self_ns == 1000);
  }

  SECTION("the timeline's tracks") {
    require_timeline_agrees(d);
    const TimelineModel m(std::make_shared<const SessionData>(d));
    CHECK(m.find(EventSource::Op, 2)->level == 2);  // grandchild, which outlived its parent and grandparent
    CHECK(m.find(EventSource::Op, 3)->level == 0);  // after: starts once its recorded enclosers were clamped
    std::vector<std::string> warnings;
    for (const rt::viz::TimelineWarning& w : m.warnings()) warnings.push_back(w.text());
    CHECK(warnings ==
          std::vector<std::string>{"1 event ending before its start repaired", "3 overlapping events repaired"});
  }
}
