// Selecting on the timeline: hit-testing, event details, name search with next/previous, and the
// per-name statistics of a time range (checked against a brute-force count on generated sessions).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "rt/error.h"
#include "rt/op_origin.h"
#include "rt/viz/timeline_select.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using rt::prof::GpuActivityKind;
using rt::prof::OpKind;
using fixtures::SessionBuilder;

namespace {

struct Sample {
  SessionBuilder b;
  std::shared_ptr<const rt::prof::SessionData> data;
  Sample() {
    b.thread(1, "main");
    auto& linear = b.op("aten::linear", 0, 1000);
    linear.module = b.intern("net.fc1");
    linear.sequence_nr = 4;
    auto& mm = b.op("aten::addmm", 100, 700);
    mm.input_shapes = b.intern("[[64, 784], [784, 10]]");
    mm.input_dtypes = b.intern("[float32, float32]");
    mm.correlation_id = 9;
    b.op("aten::empty", 150, 250);
    b.op("ReLU", 2000, 2100, 1, OpKind::UserRange);
    b.gpu("Memcpy HtoD", 3000, 3500, 0, 7, GpuActivityKind::Memcpy).bytes = 4096;
    b.step(12, 0, 5000);
    data = b.shared();
  }
};

TimelineView view_of(const TimelineModel& m, double width) {
  TimelineView v;
  v.set_extent(m.first_ns(), m.last_ns());
  v.set_width(width);
  v.fit_all();
  return v;
}

}  // namespace

TEST_CASE("hit-testing finds the event under the cursor, then the nearest within tolerance") {
  Sample s;
  const TimelineModel m(s.data);
  const TimelineView v = view_of(m, 500);  // 10 ns per pixel
  const auto main = uint32_t(*m.find_track({TrackKind::Thread, 1, 0}));

  REQUIRE(hit_test(m, main, 5, 5, v) == EventRef{main, 0, 0});      // linear at 50 ns, row 0
  REQUIRE(hit_test(m, main, 20, 25, v) == EventRef{main, 1, 0});    // addmm at 200 ns, row 1
  REQUIRE(hit_test(m, main, 20, 45, v) == EventRef{main, 2, 0});    // empty at 200 ns, row 2
  REQUIRE_FALSE(hit_test(m, main, 50, 45, v));                       // row 2 has nothing at 500 ns
  REQUIRE_FALSE(hit_test(m, main, 5, 65, v));                        // no row 3
  REQUIRE(hit_test(m, main, 101.5, 5, v) == EventRef{main, 0, 0});  // 15 ns after linear: within 2 px
  REQUIRE_FALSE(hit_test(m, main, 150, 5, v));                       // 500 ns from anything
  REQUIRE(hit_test(m, main, 199, 5, v) == EventRef{main, 0, 1});    // 10 ns before ReLU
  REQUIRE_FALSE(hit_test(m, main, 5, -1, v));
  REQUIRE_FALSE(hit_test(m, 99, 5, 5, v));
}

TEST_CASE("details name the op, its module, shapes, times, self time and links") {
  Sample s;
  const TimelineModel m(s.data);
  const auto main = uint32_t(*m.find_track({TrackKind::Thread, 1, 0}));

  const EventDetails linear = details(m, {main, 0, 0});
  REQUIRE(linear.name == "aten::linear");
  REQUIRE(linear.kind == "op");
  REQUIRE(linear.track == "main");
  REQUIRE(linear.module == "net.fc1");
  REQUIRE(linear.duration_ns == 1000);
  REQUIRE(linear.self_ns == 400);
  REQUIRE(linear.sequence_nr == 4);
  REQUIRE_FALSE(linear.repaired);

  const EventDetails mm = details(m, {main, 1, 0});
  REQUIRE(mm.input_shapes == "[[64, 784], [784, 10]]");
  REQUIRE(mm.input_dtypes == "[float32, float32]");
  REQUIRE(mm.start_ns == 100);
  REQUIRE(mm.self_ns == 500);
  REQUIRE(mm.depth == 1);
  REQUIRE(mm.correlation_id == 9);

  REQUIRE(details(m, {main, 0, 1}).kind == "user range");
  const EventDetails copy = details(m, *m.find(EventSource::Gpu, 0));
  REQUIRE(copy.kind == "memcpy");
  REQUIRE(copy.bytes == 4096);
  REQUIRE(copy.device == 0);
  REQUIRE(copy.stream == 7);
  const EventDetails step = details(m, {0, 0, 0});
  REQUIRE(step.name == "step 12");
  REQUIRE(step.kind == "step");
  REQUIRE(linear.plugin.empty());
}

TEST_CASE("details of an op a plugin registered name the plugin") {
  rt::set_op_origin("rtx_viz::fused", "org.test.viz-plugin");  // what the plugin host does when it registers an op
  SessionBuilder b;
  b.thread(1, "main");
  b.op("rtx_viz::fused", 0, 100);
  b.op("FusedBackward0", 200, 300, 1, OpKind::BackwardNode);
  const TimelineModel m(b.shared());
  const auto main = uint32_t(*m.find_track({TrackKind::Thread, 1, 0}));
  REQUIRE(details(m, {main, 0, 0}).plugin == "org.test.viz-plugin");
  REQUIRE(details(m, {main, 0, 1}).plugin.empty());
}

TEST_CASE("details say when the model repaired an event's times") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("a", 0, 100);
  b.op("b", 50, 200);
  const TimelineModel m(b.shared());
  const EventDetails d = details(m, {0, 1, 0});
  REQUIRE(d.repaired);
  REQUIRE(d.end_ns == 100);
}

TEST_CASE("search is case-insensitive, in time order, and next/previous wrap around") {
  Sample s;
  const TimelineModel m(s.data);
  EventSearch search(m, "ATEN::");
  REQUIRE(search.matches().size() == 3);
  std::vector<std::string> names;
  for (const EventRef& e : search.matches()) names.push_back(m.name(e));
  REQUIRE(names == std::vector<std::string>{"aten::linear", "aten::addmm", "aten::empty"});

  REQUIRE_FALSE(search.current());
  REQUIRE(m.name(*search.next()) == "aten::linear");
  REQUIRE(m.name(*search.next()) == "aten::addmm");
  REQUIRE(m.name(*search.previous()) == "aten::linear");
  REQUIRE(m.name(*search.previous()) == "aten::empty");  // wrapped
  REQUIRE(m.name(*search.next()) == "aten::linear");
  REQUIRE(m.name(*search.first_at_or_after(120)) == "aten::empty");
  REQUIRE(*search.current() == 2);
  REQUIRE(m.name(*search.first_at_or_after(9999)) == "aten::linear");

  REQUIRE(EventSearch(m, "memcpy").matches().size() == 1);
  REQUIRE(EventSearch(m, "STEP 1").matches().size() == 1);
  EventSearch none(m, "conv");
  REQUIRE(none.next() == nullptr);
  REQUIRE(none.previous() == nullptr);
  REQUIRE(EventSearch(m, "").matches().empty());
}

TEST_CASE("range statistics clip each event to the range and subtract its children") {
  Sample s;
  const TimelineModel m(s.data);
  const auto rows = range_stats(m, 200, 2050);
  std::map<std::string, RangeRow> by_name;
  for (const RangeRow& r : rows) by_name[r.name] = r;
  REQUIRE(rows.size() == 4);  // steps are not counted; the memcpy is outside
  REQUIRE(rows[0].name == "aten::linear");
  REQUIRE(by_name["aten::linear"].total_ns == 800);
  REQUIRE(by_name["aten::linear"].self_ns == 800 - 500);
  REQUIRE(by_name["aten::addmm"].total_ns == 500);
  REQUIRE(by_name["aten::addmm"].self_ns == 500 - 50);
  REQUIRE(by_name["aten::empty"].total_ns == 50);
  REQUIRE(by_name["ReLU"].total_ns == 50);
  REQUIRE(by_name["ReLU"].count == 1);
  for (size_t i = 1; i < rows.size(); ++i) REQUIRE(rows[i - 1].total_ns >= rows[i].total_ns);
  REQUIRE_THROWS_AS(range_stats(m, 10, 5), rt::ValueError);

  const auto main = uint32_t(*m.find_track({TrackKind::Thread, 1, 0}));
  const uint32_t only_gpu[] = {uint32_t(m.tracks().size() - 1)};
  const auto gpu_rows = range_stats(m, 0, 10000, only_gpu);
  REQUIRE(gpu_rows.size() == 1);
  REQUIRE(gpu_rows[0].name == "Memcpy HtoD");
  REQUIRE(main != only_gpu[0]);
}

TEST_CASE("range statistics agree with a brute-force count on a generated session") {
  const TimelineModel m(fixtures::generate_session({.ops = 8000, .threads = 2, .seed = 21}));
  const int64_t span = m.last_ns() - m.first_ns();
  for (const auto& [t0, t1] : {std::pair{m.first_ns(), m.last_ns()}, std::pair{span / 3, span / 3 + span / 7},
                               std::pair{span / 2, span / 2}}) {
    std::map<std::string, RangeRow> expected;
    for (uint32_t t = 0; t < m.tracks().size(); ++t) {
      const Track& track = m.tracks()[t];
      if (track.id.kind != TrackKind::Thread && track.id.kind != TrackKind::GpuStream) continue;
      for (uint32_t l = 0; l < track.levels.size(); ++l) {
        for (uint32_t i = 0; i < track.levels[l].size(); ++i) {
          const EventRef e{t, l, i};
          const int64_t s = m.start_ns(e), en = m.end_ns(e);
          if (en < t0 || s > t1) continue;
          auto clip = [&](int64_t a, int64_t b) { return std::max<int64_t>(0, std::min(b, t1) - std::max(a, t0)); };
          int64_t self = clip(s, en);
          if (l + 1 < track.levels.size()) {
            const TrackLevel& c = track.levels[l + 1];
            for (size_t k = 0; k < c.size(); ++k)
              if (c.starts[k] >= s && c.ends[k] <= en && c.starts[k] <= en) self -= clip(c.starts[k], c.ends[k]);
          }
          RangeRow& row = expected[m.name(e)];
          ++row.count;
          row.total_ns += clip(s, en);
          row.self_ns += self;
        }
      }
    }
    const auto rows = range_stats(m, t0, t1);
    REQUIRE(rows.size() == expected.size());
    for (const RangeRow& r : rows) {
      INFO(r.name << " in " << t0 << ".." << t1);
      REQUIRE(r.count == expected[r.name].count);
      REQUIRE(r.total_ns == expected[r.name].total_ns);
      REQUIRE(r.self_ns == expected[r.name].self_ns);
    }
  }
}
