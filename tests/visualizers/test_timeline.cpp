// The timeline model: tracks and their order, nesting rebuilt from time, repairs of imperfect
// input, the view's zoom and pan arithmetic, and the flow arrows.
#include <catch2/catch.hpp>

#include <algorithm>

#include "rt/error.h"
#include "rt/viz/timeline.h"
#include "rt/viz/timeline_flows.h"
#include "rt/viz/timeline_select.h"
#include "rt/viz/timeline_view.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using rt::prof::GpuActivityKind;
using rt::prof::OpKind;
using fixtures::SessionBuilder;

namespace {

std::vector<std::string> track_names(const TimelineModel& m) {
  std::vector<std::string> out;
  for (const Track& t : m.tracks()) out.push_back(t.name);
  return out;
}

// Every level sorted by start, with non-overlapping events (so ends are sorted too), and every
// event of level l + 1 inside some event of level l.
void require_well_nested(const Track& track) {
  for (size_t l = 0; l < track.levels.size(); ++l) {
    const TrackLevel& level = track.levels[l];
    for (size_t i = 0; i < level.size(); ++i) {
      REQUIRE(level.starts[i] <= level.ends[i]);
      if (i > 0) REQUIRE(level.ends[i - 1] <= level.starts[i]);
    }
    if (l == 0) continue;
    const TrackLevel& parents = track.levels[l - 1];
    for (size_t i = 0; i < level.size(); ++i) {
      auto it = std::upper_bound(parents.starts.begin(), parents.starts.end(), level.starts[i]);
      REQUIRE(it != parents.starts.begin());
      const size_t p = size_t(it - parents.starts.begin()) - 1;
      INFO("level " << l << " event " << i);
      REQUIRE(parents.ends[p] >= level.ends[i]);
    }
  }
}

}  // namespace

TEST_CASE("an empty session gives no tracks, no warnings and an empty extent") {
  const TimelineModel m(std::make_shared<const rt::prof::SessionData>());
  REQUIRE(m.tracks().empty());
  REQUIRE(m.warnings().empty());
  REQUIRE(m.first_ns() == 0);
  REQUIRE(m.last_ns() == 0);
  REQUIRE(m.event_count() == 0);
  REQUIRE(FlowIndex(m).all().empty());
  REQUIRE_THROWS_AS(TimelineModel(nullptr), rt::ValueError);
}

TEST_CASE("tracks come as steps, threads by first event, GPU streams by device and stream, counters by name") {
  SessionBuilder b;
  b.thread(1, "main").thread(2, "autograd");
  b.op("late", 500, 600, 1);
  b.op("early", 100, 200, 2);
  b.gpu("k1", 300, 400, 1, 3);
  b.gpu("k0", 300, 400, 0, 9);
  b.gpu("k2", 300, 400, 0, 2, GpuActivityKind::Memcpy);
  b.gpu("sync", 300, 400, 0, 2, GpuActivityKind::Synchronization);
  b.counter("lr", 50, 0.1).counter("loss", 700, 1.0).counter("loss", 60, 2.0);
  b.step(0, 0, 1000);
  const TimelineModel m(b.shared());

  REQUIRE(track_names(m) == std::vector<std::string>{"steps", "autograd", "main", "cuda:0 stream 2",
                                                      "cuda:0 stream 9", "cuda:1 stream 3", "loss", "lr"});
  REQUIRE(m.tracks()[0].id.kind == TrackKind::Steps);
  REQUIRE(m.tracks()[3].levels.at(0).size() == 1);  // the memcpy, not the synchronization
  const Track& loss = m.tracks()[6];
  REQUIRE(loss.counter_times == std::vector<int64_t>{60, 700});
  REQUIRE(loss.counter_values == std::vector<double>{2.0, 1.0});
  REQUIRE(m.first_ns() == 0);
  REQUIRE(m.last_ns() == 1000);
  REQUIRE(m.event_count() == 1 + 2 + 3 + 3);
  REQUIRE(m.name({0, 0, 0}) == "step 0");
}

TEST_CASE("collectives get a track per group after the threads, in lanes when several are in flight") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("all_reduce", 100, 110, 1);
  auto& first = b.collective("all_reduce", "default", 120, 500);
  first.enqueue_ns = 100;
  first.seq = 1;
  first.bytes = 4096;
  first.call_site = b.data().strings.intern("train.py:91");
  b.collective("all_reduce", "default", 200, 400);  // in flight with the first: a second lane
  b.collective("broadcast", "default", 500, 600);   // starts as the first ends: its lane
  b.collective("all_gather", "group 1", 50, 60);
  b.gpu("k", 150, 180, 0, 7);
  const TimelineModel m(b.shared());

  REQUIRE(track_names(m) == std::vector<std::string>{"main", "collectives: default", "collectives: group 1",
                                                      "cuda:0 stream 7"});
  const Track& t = m.tracks()[1];
  REQUIRE(t.id.kind == TrackKind::Collectives);
  REQUIRE(t.levels.size() == 2);
  REQUIRE(t.levels[0].records == std::vector<uint32_t>{0, 2});
  REQUIRE(t.levels[1].records == std::vector<uint32_t>{1});
  require_well_nested(Track{.levels = {t.levels[0]}});
  REQUIRE(m.self_ns({1, 0, 0}) == 380);  // lanes are not children: the whole duration
  REQUIRE(m.name({1, 1, 0}) == "all_reduce");
  REQUIRE(m.find(EventSource::Collective, 2) == EventRef{1, 0, 1});
  REQUIRE(m.find(EventSource::Collective, 3) == EventRef{2, 0, 0});
  REQUIRE(m.event_count() == 1 + 4 + 1);

  const EventDetails d = details(m, {1, 0, 0});
  REQUIRE(d.kind == "collective");
  REQUIRE(d.group == "default");
  REQUIRE(d.seq == 1);
  REQUIRE(d.bytes == 4096);
  REQUIRE(d.call_site == "train.py:91");
  REQUIRE(d.queued_ns == 20);
  REQUIRE(EventSearch(m, "broadcast").matches() == std::vector<EventRef>{{1, 0, 1}});
}

TEST_CASE("a merged job lists each rank's threads and then its collectives, rank by rank") {
  SessionBuilder b;
  b.data().threads.push_back({1, 1, b.data().strings.intern("rank 0 \u00b7 main"), 0});
  b.data().threads.push_back({2, 2, b.data().strings.intern("rank 1 \u00b7 main"), 1});
  b.op("step", 100, 200, 2);  // rank 1 starts first: still listed after rank 0
  b.op("step", 300, 400, 1);
  b.collective("all_reduce", "default", 150, 250, 2, 1);
  b.collective("all_reduce", "default", 350, 450, 1, 0);
  const TimelineModel m(b.shared());
  REQUIRE(track_names(m) == std::vector<std::string>{"rank 0 \u00b7 main", "rank 0 \u00b7 collectives: default",
                                                      "rank 1 \u00b7 main", "rank 1 \u00b7 collectives: default"});
  REQUIRE(m.tracks()[3].rank == 1);
}

TEST_CASE("track ids name what a track shows and survive a later snapshot with new tracks") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("a", 100, 200, 1);
  b.gpu("k", 150, 180, 0, 7);
  b.counter("loss", 10, 1.0);
  const TimelineModel before(b.shared());
  const TrackId main_id = before.tracks()[0].id;
  const TrackId stream_id = before.tracks()[1].id;
  const TrackId loss_id = before.tracks()[2].id;

  b.thread(2, "dataloader 0");
  b.op("load", 50, 90, 2);  // a new thread whose first event comes first
  const TimelineModel after(b.shared());
  REQUIRE(after.tracks()[0].name == "dataloader 0");
  REQUIRE(after.tracks()[*after.find_track(main_id)].name == "main");
  REQUIRE(after.tracks()[*after.find_track(stream_id)].name == "cuda:0 stream 7");
  REQUIRE(after.tracks()[*after.find_track(loss_id)].name == "loss");
  REQUIRE_FALSE(after.find_track({TrackKind::Thread, 99, 0}));
}

TEST_CASE("levels are rebuilt from the intervals, not from the recorded depth") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("outer", 0, 100).depth = 5;
  b.op("child", 10, 40).depth = 0;
  b.op("grandchild", 20, 30);
  b.op("child2", 40, 90);  // starts where child ends: a sibling
  b.op("zero", 90, 90);    // zero width at child2's end: its sibling (Note [Nesting clamp])
  b.op("next", 100, 150);
  const TimelineModel m(b.shared());
  const Track& t = m.tracks().at(0);
  REQUIRE(t.levels.size() == 3);
  REQUIRE(t.levels[0].starts == std::vector<int64_t>{0, 100});
  REQUIRE(t.levels[1].starts == std::vector<int64_t>{10, 40, 90});
  REQUIRE(t.levels[2].starts == std::vector<int64_t>{20});
  REQUIRE(m.warnings().empty());
  require_well_nested(t);

  REQUIRE(m.self_ns({0, 0, 0}) == 100 - 30 - 50);
  REQUIRE(m.self_ns({0, 1, 0}) == 30 - 10);
  REQUIRE(m.self_ns({0, 0, 1}) == 50);
  REQUIRE(m.find(EventSource::Op, 2) == EventRef{0, 2, 0});
  REQUIRE_THROWS_AS(m.start_ns({0, 9, 0}), rt::IndexError);
}

TEST_CASE("CUDA runtime calls go on their thread's track, nested under the op that made them") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("aten::mm", 0, 100);
  b.gpu("cudaLaunchKernel", 10, 20, 0, 0, GpuActivityKind::Runtime).thread = 1;
  b.gpu("gemm", 30, 80, 0, 7);
  const TimelineModel m(b.shared());
  REQUIRE(m.tracks().size() == 2);
  REQUIRE(m.tracks()[0].levels.at(1).sources == std::vector<EventSource>{EventSource::Gpu});
  REQUIRE(m.name({0, 1, 0}) == "cudaLaunchKernel");
}

TEST_CASE("imperfect input is repaired and counted instead of crashing") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("a", 0, 100);
  b.op("overlaps a", 50, 150);      // starts inside a, ends after it
  b.op("backwards", 300, 200);      // end < start
  b.op("same slot", 400, 500).depth = 0;
  b.op("same slot too", 450, 550).depth = 0;
  b.op("stranger", 10, 20, 42);     // no ThreadRecord for 42
  const TimelineModel m(b.shared());

  std::vector<std::string> texts;
  for (const TimelineWarning& w : m.warnings()) texts.push_back(w.text());
  REQUIRE(texts == std::vector<std::string>{"1 event ending before its start repaired",
                                            "2 overlapping events repaired",
                                            "1 event on threads without a thread record"});
  const Track& main = m.tracks()[0];
  require_well_nested(main);
  REQUIRE(main.levels[1].starts == std::vector<int64_t>{50, 450});
  REQUIRE(main.levels[1].ends == std::vector<int64_t>{100, 500});
  REQUIRE(main.levels[0].ends == std::vector<int64_t>{100, 300, 500});  // the backwards one is 0 wide
  REQUIRE(m.tracks()[1].name == "thread 42");
}

TEST_CASE("generated sessions nest into well-formed levels on every track") {
  const auto data = fixtures::generate_session({.ops = 20000, .threads = 3, .seed = 7});
  const TimelineModel m(data);
  REQUIRE(m.warnings().empty());
  size_t events = 0;
  for (const Track& t : m.tracks()) {
    require_well_nested(t);
    for (const TrackLevel& l : t.levels) events += l.size();
  }
  REQUIRE(events == data->ops.size() + data->gpu.size() + data->steps.size());
}

TEST_CASE("the view converts time and pixels and zooms about the cursor") {
  TimelineView v;
  v.set_extent(1000, 11000);
  v.set_width(1000);
  v.fit_all();
  REQUIRE(v.t0() == 1000);
  REQUIRE(v.t1() == 11000);
  REQUIRE(v.ns_per_px() == Approx(10.0));
  REQUIRE(v.x_of(1000) == Approx(0.0));
  REQUIRE(v.x_of(11000) == Approx(1000.0));
  REQUIRE(v.time_at(250) == 3500);

  v.zoom(4.0, 250);  // the time under x = 250 stays there
  REQUIRE(v.span_ns() == 2500);
  REQUIRE(v.time_at(250) == 3500);
  REQUIRE(v.x_of(3500) == Approx(250.0));

  v.pan(100);  // 100 px = 250 ns to the left
  REQUIRE(v.t0() == 2875 - 250);
  v.pan(1e6);  // clamped to the extent
  REQUIRE(v.t0() == 1000);
  REQUIRE(v.span_ns() == 2500);
  v.pan(-1e6);
  REQUIRE(v.t1() == 11000);

  v.zoom(1e9, 500);
  REQUIRE(v.span_ns() == TimelineView::kMinSpanNs);
  v.zoom(1e-9, 500);
  REQUIRE(v.t0() == 1000);
  REQUIRE(v.t1() == 11000);

  v.set_window(-5000, 4000);
  REQUIRE(v.t0() == 1000);
  REQUIRE(v.t1() == 10000);
  REQUIRE_THROWS_AS(v.set_width(0), rt::ValueError);
  REQUIRE_THROWS_AS(v.zoom(0, 1), rt::ValueError);
  REQUIRE_THROWS_AS(v.set_extent(5, 4), rt::ValueError);
}

TEST_CASE("a view over an empty or very short extent keeps the minimum span") {
  TimelineView v;
  v.set_extent(500, 500);
  v.fit_all();
  REQUIRE(v.t0() == 500);
  REQUIRE(v.span_ns() == TimelineView::kMinSpanNs);
}

TEST_CASE("flows link ops to the GPU work they launched and forward ops to their backward nodes") {
  SessionBuilder b;
  b.thread(1, "main").thread(2, "autograd");
  b.op("aten::linear", 0, 100).sequence_nr = 5;
  auto& mm = b.op("aten::addmm", 10, 90);
  mm.sequence_nr = 5;
  mm.correlation_id = 77;
  b.op("aten::relu", 100, 120).sequence_nr = 6;
  b.gpu("gemm", 50, 150).external_id = 77;
  b.gpu("memset", 160, 170, 0, 7, GpuActivityKind::Memset).external_id = 77;
  b.gpu("cudaLaunchKernel", 20, 30, 0, 0, GpuActivityKind::Runtime).external_id = 77;
  b.op("AddmmBackward0", 500, 600, 2, OpKind::BackwardNode).sequence_nr = 5;
  b.op("ReluBackward0", 400, 450, 2, OpKind::BackwardNode).sequence_nr = 6;
  b.op("OrphanBackward", 700, 750, 2, OpKind::BackwardNode).sequence_nr = 99;
  const TimelineModel m(b.shared());
  const FlowIndex flows(m);

  REQUIRE(flows.all().size() == 4);
  const EventRef addmm = *m.find(EventSource::Op, 1);
  const auto from_addmm = flows.for_event(addmm);
  REQUIRE(from_addmm.size() == 3);
  size_t launches = 0;
  for (const Flow& f : from_addmm) {
    if (f.kind == FlowKind::Launch) {
      ++launches;
      REQUIRE(f.from == addmm);
      REQUIRE(f.from_ns == 10);
    } else {
      REQUIRE(m.name(f.to) == "AddmmBackward0");
      REQUIRE(f.to_ns == 500);
    }
  }
  REQUIRE(launches == 2);
  const auto relu_flows = flows.for_event(*m.find(EventSource::Op, 2));
  REQUIRE(relu_flows.size() == 1);
  REQUIRE(m.name(relu_flows[0].to) == "ReluBackward0");
  REQUIRE(flows.for_event(*m.find(EventSource::Op, 0)).empty());  // linear: addmm started later

  std::vector<Flow> visible;
  flows.in_window(300, 480, visible);  // addmm -> AddmmBackward0 and relu -> ReluBackward0
  REQUIRE(visible.size() == 2);
  flows.in_window(620, 800, visible);
  REQUIRE(visible.empty());
  for (size_t i = 1; i < flows.all().size(); ++i)
    REQUIRE(std::min(flows.all()[i - 1].from_ns, flows.all()[i - 1].to_ns) <=
            std::min(flows.all()[i].from_ns, flows.all()[i].to_ns));
}

TEST_CASE("flows in a window are exactly the flows whose span touches it") {
  const TimelineModel m(fixtures::generate_session({.ops = 5000, .seed = 3}));
  const FlowIndex flows(m);
  REQUIRE(!flows.all().empty());
  std::vector<Flow> visible;
  for (int64_t t0 : {int64_t(0), m.last_ns() / 3, m.last_ns() / 2}) {
    const int64_t t1 = t0 + (m.last_ns() - m.first_ns()) / 10;
    flows.in_window(t0, t1, visible);
    size_t expected = 0;
    for (const Flow& f : flows.all())
      if (std::min(f.from_ns, f.to_ns) <= t1 && std::max(f.from_ns, f.to_ns) >= t0) ++expected;
    REQUIRE(visible.size() == expected);
  }
}
