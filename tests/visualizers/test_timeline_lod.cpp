// Level of detail: folding keeps every event of the window exactly once, block extents exact,
// wide events on their own, and the item count bounded by the pixels, at every zoom.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "rt/error.h"
#include "rt/viz/timeline_lod.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using fixtures::SessionBuilder;

namespace {

size_t events_in_window(const TrackLevel& level, int64_t t0, int64_t t1) {
  size_t n = 0;
  for (size_t i = 0; i < level.size(); ++i)
    if (level.ends[i] >= t0 && level.starts[i] <= t1) ++n;
  return n;
}

// The contract of timeline_lod.h, checked against the level's events one by one.
void require_exact_folding(const TrackLevel& level, const std::vector<DrawItem>& items, int64_t t0, int64_t t1,
                           double min_ns) {
  REQUIRE(LevelFrame{0, items}.event_count() == events_in_window(level, t0, t1));
  for (size_t k = 0; k < items.size(); ++k) {
    const DrawItem& item = items[k];
    INFO("item " << k << " first " << item.first << " count " << item.count);
    REQUIRE(item.count >= 1);
    if (k > 0) REQUIRE(items[k - 1].first + items[k - 1].count == item.first);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t i = item.first; i < item.first + item.count; ++i) {
      REQUIRE(level.ends[i] >= t0);
      REQUIRE(level.starts[i] <= t1);
      lo = std::min(lo, level.starts[i]);
      hi = std::max(hi, level.ends[i]);
      if (item.folded()) {
        REQUIRE(double(level.ends[i] - level.starts[i]) < min_ns);
        if (i > item.first) REQUIRE(double(level.starts[i] - level.ends[i - 1]) < min_ns);
      }
    }
    REQUIRE(item.start_ns == lo);
    REQUIRE(item.end_ns == hi);
    // A run stops only where the next event is wide or far away.
    if (item.folded() && k + 1 < items.size() && items[k + 1].first == item.first + item.count) {
      const uint32_t next = item.first + item.count;
      const bool wide = double(level.ends[next] - level.starts[next]) >= min_ns;
      const bool far = double(level.starts[next] - level.ends[next - 1]) >= min_ns;
      REQUIRE((wide || far));
    }
  }
}

}  // namespace

TEST_CASE("a run of narrow events folds into one block with its count and exact extent") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("wide", 0, 1000);
  for (int i = 0; i < 100; ++i) b.op("tiny", 1000 + i * 3, 1000 + i * 3 + 2);
  b.op("wide again", 1400, 2400);
  b.op("lonely", 3000, 3001);
  const TimelineModel m(b.shared());
  TimelineView v;
  v.set_extent(m.first_ns(), m.last_ns());
  v.set_width(301);  // 10 ns per pixel: min_ns = 30
  v.fit_all();

  TrackFrame frame;
  build_track_frame(m, 0, v, frame);
  REQUIRE(frame.levels.size() == 1);
  const auto& items = frame.levels[0].items;
  REQUIRE(items.size() == 4);
  REQUIRE(items[0].count == 1);
  REQUIRE(items[1].folded());
  REQUIRE(items[1].count == 100);
  REQUIRE(items[1].start_ns == 1000);
  REQUIRE(items[1].end_ns == 1000 + 99 * 3 + 2);
  REQUIRE(items[2].start_ns == 1400);
  REQUIRE(items[3].count == 1);  // a lone narrow event stays itself
  REQUIRE(items[3].start_ns == 3000);

  v.set_window(1000, 1100);  // zoomed in to 1/3 ns per pixel: a 2 ns event is 6 px wide
  build_track_frame(m, 0, v, frame, {.min_px = 3});
  REQUIRE(frame.levels[0].event_count() == events_in_window(m.tracks()[0].levels[0], 1000, 1100));
  for (const DrawItem& item : frame.levels[0].items) REQUIRE_FALSE(item.folded());
}

TEST_CASE("folding is exact on every level at every zoom of a generated session") {
  const TimelineModel m(fixtures::generate_session({.ops = 30000, .threads = 2, .seed = 11}));
  std::mt19937_64 rng(5);
  TimelineView v;
  v.set_extent(m.first_ns(), m.last_ns());
  TimelineFrame frame;
  size_t blocks = 0, single = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const double width = double(50 + rng() % 3000);
    v.set_width(width);
    v.fit_all();
    const double zoom = std::pow(10.0, double(rng() % 700) / 100.0);  // 1x .. 10^7x
    v.zoom(zoom, double(rng() % uint64_t(width)));
    const double min_px = trial % 3 == 0 ? 1.0 : 3.0;
    build_frame(m, v, frame, {.min_px = min_px});
    REQUIRE(frame.tracks.size() == m.tracks().size());
    const double min_ns = min_px * v.ns_per_px();
    for (const TrackFrame& tf : frame.tracks) {
      const Track& track = m.tracks()[tf.track];
      size_t covered_levels = 0;
      for (const LevelFrame& lf : tf.levels) {
        INFO("trial " << trial << " track " << track.name << " level " << lf.level << " window " << v.t0() << ".."
                      << v.t1() << " width " << width);
        require_exact_folding(track.levels[lf.level], lf.items, v.t0(), v.t1(), min_ns);
        REQUIRE(double(lf.items.size()) <= 2.0 * width / min_px + 2.0);
        for (const DrawItem& item : lf.items) ++(item.folded() ? blocks : single);
        ++covered_levels;
      }
      size_t levels_with_events = 0;
      for (const TrackLevel& level : track.levels)
        if (events_in_window(level, v.t0(), v.t1()) > 0) ++levels_with_events;
      REQUIRE(covered_levels == levels_with_events);
    }
  }
  REQUIRE(blocks > 100);  // the trials exercised both folding and single events
  REQUIRE(single > 100);
}

TEST_CASE("folding stays exact with Unix-epoch-sized times") {
  auto data = std::make_shared<rt::prof::SessionData>(*fixtures::generate_session({.ops = 5000, .seed = 13}));
  constexpr int64_t kEpoch = 1'700'000'000'000'000'000;
  for (auto& op : data->ops) op.start_ns += kEpoch, op.end_ns += kEpoch;
  for (auto& g : data->gpu) g.start_ns += kEpoch, g.end_ns += kEpoch;
  for (auto& st : data->steps) st.start_ns += kEpoch, st.end_ns += kEpoch;
  for (auto& c : data->counters) c.time_ns += kEpoch;
  const TimelineModel m(data);
  TimelineView v;
  v.set_extent(m.first_ns(), m.last_ns());
  v.set_width(1000);
  TimelineFrame frame;
  for (double zoom : {1.0, 37.0, 1e3, 1e5}) {
    v.fit_all();
    v.zoom(zoom, 400);
    build_frame(m, v, frame);
    for (const TrackFrame& tf : frame.tracks)
      for (const LevelFrame& lf : tf.levels)
        require_exact_folding(m.tracks()[tf.track].levels[lf.level], lf.items, v.t0(), v.t1(), 3.0 * v.ns_per_px());
  }
}

TEST_CASE("counter tracks get per-pixel columns and interval tracks none") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("a", 0, 1000);
  for (int i = 0; i <= 100; ++i) b.counter("loss", i * 10, i == 50 ? 100.0 : 1.0);
  const TimelineModel m(b.shared());
  TimelineView v;
  v.set_extent(0, 1000);
  v.set_width(10);
  v.fit_all();
  TimelineFrame frame;
  build_frame(m, v, frame);
  REQUIRE(frame.tracks[0].counter.empty());
  const auto& columns = frame.tracks[1].counter;
  REQUIRE(columns.size() == 10);
  uint32_t samples = 0;
  double highest = 0;
  for (const ScalarColumn& c : columns) {
    samples += c.count;
    highest = std::max(highest, c.max);
  }
  REQUIRE(samples == 101);
  REQUIRE(highest == 100.0);  // the spike survives downsampling
}

TEST_CASE("level of detail rejects a non-positive minimum width and an unknown track") {
  const TimelineModel m(fixtures::generate_session({.ops = 100, .seed = 2}));
  TimelineView v;
  TimelineFrame frame;
  REQUIRE_THROWS_AS(build_frame(m, v, frame, {.min_px = 0}), rt::ValueError);
  TrackFrame one;
  REQUIRE_THROWS_AS(build_track_frame(m, uint32_t(m.tracks().size()), v, one), rt::IndexError);
}
