// TimelineModel::append (rt/viz/timeline.h): a model fed a growing session chunk by chunk, in any arrival order
// (late outer ops, shuffled records, threads named late, new tracks), equals a model built from scratch on the
// same data, field by field; a late outer op moves the ops it encloses down a level; a growth that does not
// continue the model is refused.
#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "live_growth.h"
#include "rt/error.h"
#include "rt/viz/timeline.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using fixtures::Arrival;
using fixtures::GrowingSession;
using fixtures::SessionBuilder;
using rt::prof::GpuActivityKind;
using rt::prof::SessionData;

namespace {

// A generated session made imperfect on purpose: ops on a thread without a record, overlapping ops (clamped),
// ends before starts, ops with equal intervals, CUDA runtime and driver calls on the threads, synchronization records
// (not drawn), a second device, counters of several names with equal times.
SessionData messy_session(uint64_t seed) {
  SessionData d = *fixtures::generate_session({.ops = 3000, .threads = 3, .max_depth = 5, .seed = seed});
  std::mt19937_64 rng(seed);
  auto between = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(std::max<int64_t>(1, hi - lo))); };
  int64_t end = 0;
  for (const auto& op : d.ops) end = std::max(end, op.end_ns);
  const auto relu = d.strings.intern("aten::relu");
  for (int i = 0; i < 200; ++i) {
    rt::prof::OpRecord r;
    r.start_ns = between(0, end);
    r.end_ns = i % 10 == 0 ? r.start_ns - 10 : r.start_ns + between(1, 200000);  // some end before they start
    r.thread = i % 3 == 0 ? 99 : 1;                                              // thread 99 has no ThreadRecord
    r.name = relu;
    d.ops.push_back(r);
  }
  for (size_t i = 0; i < 60; ++i) d.ops.push_back(d.ops[i * 37]);  // twins: equal intervals, nested by record order
  const auto launch = d.strings.intern("cudaLaunchKernel"), sync = d.strings.intern("cudaDeviceSynchronize");
  for (size_t i = 0; i < d.ops.size(); i += 7) {
    rt::prof::GpuActivityRecord g;
    g.start_ns = d.ops[i].start_ns;
    g.end_ns = std::min(d.ops[i].end_ns, g.start_ns + 50);
    g.thread = d.ops[i].thread;
    g.kind = i % 3 ? GpuActivityKind::Runtime : GpuActivityKind::Driver;
    g.name = launch;
    d.gpu.push_back(g);
    if (i % 5 == 0) {
      g.kind = GpuActivityKind::Synchronization;
      g.name = sync;
      d.gpu.push_back(g);
    }
  }
  const auto copy = d.strings.intern("Memcpy HtoD");
  for (int i = 0; i < 100; ++i) {
    rt::prof::GpuActivityRecord g;
    g.start_ns = between(0, end);
    g.end_ns = g.start_ns + between(1, 5000);
    g.device = 1;
    g.stream = 3;
    g.kind = GpuActivityKind::Memcpy;
    g.name = copy;
    d.gpu.push_back(g);
  }
  const char* names[] = {"lr", "grad norm", "samples/s"};
  for (int i = 0; i < 300; ++i)
    d.counters.push_back({between(0, 40) * (end / 40), d.strings.intern(names[i % 3]), double(i)});  // equal times
  // Collectives of two groups, several in flight at once (lanes), one group appearing only late.
  const auto all_reduce = d.strings.intern("all_reduce"), group = d.strings.intern("default"),
             late_group = d.strings.intern("group 1");
  for (int i = 0; i < 80; ++i) {
    rt::prof::CollectiveRecord c;
    c.start_ns = between(0, end);
    c.enqueue_ns = c.start_ns - between(0, 1000);
    c.end_ns = c.start_ns + between(1, 300000);
    c.thread = 1;
    c.name = all_reduce;
    c.group = i > 60 && i % 2 ? late_group : group;
    c.seq = uint64_t(i);
    d.collectives.push_back(c);
  }
  return d;
}

std::vector<std::optional<EventRef>> found(const TimelineModel& m, EventSource source, size_t records) {
  std::vector<std::optional<EventRef>> out;
  for (size_t r = 0; r < records; ++r) out.push_back(m.find(source, uint32_t(r)));
  return out;
}

void require_same_model(const TimelineModel& a, const TimelineModel& b) {
  REQUIRE(a.tracks().size() == b.tracks().size());
  for (size_t t = 0; t < a.tracks().size(); ++t) {
    const Track& x = a.tracks()[t];
    const Track& y = b.tracks()[t];
    INFO("track " << t << " " << y.name);
    REQUIRE(x.id == y.id);
    REQUIRE(x.name == y.name);
    REQUIRE(x.rank == y.rank);
    REQUIRE(x.first_ns == y.first_ns);
    REQUIRE(x.last_ns == y.last_ns);
    REQUIRE(x.levels.size() == y.levels.size());
    for (size_t l = 0; l < x.levels.size(); ++l) {
      INFO("level " << l);
      REQUIRE(x.levels[l].starts == y.levels[l].starts);
      REQUIRE(x.levels[l].ends == y.levels[l].ends);
      REQUIRE(x.levels[l].records == y.levels[l].records);
      REQUIRE(x.levels[l].sources == y.levels[l].sources);
    }
    REQUIRE(x.counter_samples == y.counter_samples);
    REQUIRE(x.counter_times == y.counter_times);
    REQUIRE(x.counter_values == y.counter_values);
  }
  REQUIRE(a.warnings().size() == b.warnings().size());
  for (size_t w = 0; w < a.warnings().size(); ++w) REQUIRE(a.warnings()[w].text() == b.warnings()[w].text());
  REQUIRE(a.first_ns() == b.first_ns());
  REQUIRE(a.last_ns() == b.last_ns());
  REQUIRE(a.event_count() == b.event_count());
  REQUIRE(found(a, EventSource::Op, a.data().ops.size()) == found(b, EventSource::Op, b.data().ops.size()));
  REQUIRE(found(a, EventSource::Gpu, a.data().gpu.size()) == found(b, EventSource::Gpu, b.data().gpu.size()));
  REQUIRE(found(a, EventSource::Collective, a.data().collectives.size()) ==
          found(b, EventSource::Collective, b.data().collectives.size()));
}

// Appends chunk after chunk, comparing with a model built from scratch after each; returns the chunks fed.
int follow(const SessionData& all, Arrival arrival, uint64_t seed, size_t max_chunk) {
  GrowingSession growing(all, arrival, seed);
  TimelineModel model(growing.data());
  int chunks = 0;
  while (!growing.done()) {
    model.append(growing.next(max_chunk));
    ++chunks;
    INFO("chunk " << chunks);
    require_same_model(model, TimelineModel(std::make_shared<const SessionData>(*growing.data())));
  }
  return chunks;
}

}  // namespace

TEST_CASE("a model appended chunk by chunk equals one built from scratch, whatever the arrival order") {
  const SessionData all = messy_session(11);
  const TimelineModel whole(std::make_shared<const SessionData>(all));
  REQUIRE(whole.warnings().size() == 3);  // the messy session exercises every repair
  for (Arrival arrival : {Arrival::RecordOrder, Arrival::ByEnd, Arrival::Shuffled}) {
    for (size_t max_chunk : {size_t(40), size_t(700)}) {
      INFO("arrival " << int(arrival) << ", chunks of up to " << max_chunk);
      REQUIRE(follow(all, arrival, 5 + max_chunk, max_chunk) > 3);
    }
  }
}

TEST_CASE("one-record chunks, shuffled, still equal the model built from scratch") {
  SessionData all = messy_session(23);
  all.ops.resize(400);
  all.gpu.resize(150);
  all.counters.resize(60);
  REQUIRE(follow(all, Arrival::Shuffled, 9, 1) >= 400);
}

TEST_CASE("a late outer op encloses ops already shown: they move one level down") {
  SessionBuilder b;
  b.thread(1, "main");
  b.op("aten::mul", 10, 20);
  b.op("aten::relu", 30, 40);
  b.op("aten::add", 32, 35);
  b.op("aten::sum", 60, 70);
  auto live = std::make_shared<SessionData>(b.data());
  TimelineModel model(live);
  REQUIRE(model.tracks()[0].levels.size() == 2);
  REQUIRE(model.find(EventSource::Op, 1)->level == 0);

  rt::prof::OpRecord outer = live->ops[0];  // "train_step" [5, 50] arrives when it ends, after its children
  outer.name = live->strings.intern("train_step");
  outer.start_ns = 5;
  outer.end_ns = 50;
  const rt::prof::SessionGrowth growth{.ops = live->ops.size(), .steps = 0, .strings = live->strings.size() - 1};
  live->ops.push_back(outer);
  model.append(growth);
  const Track& main = model.tracks()[0];
  REQUIRE(main.levels.size() == 3);
  REQUIRE(main.levels[0].records == std::vector<uint32_t>{4, 3});  // train_step, then aten::sum
  REQUIRE(main.levels[1].records == std::vector<uint32_t>{0, 1});
  REQUIRE(main.levels[2].records == std::vector<uint32_t>{2});
  REQUIRE(*model.find(EventSource::Op, 2) == EventRef{0, 2, 0});
  REQUIRE(main.first_ns == 5);
  require_same_model(model, TimelineModel(std::make_shared<const SessionData>(*live)));
}

TEST_CASE("new threads, streams and counters take their place in the track order, a thread named late is renamed") {
  SessionBuilder b;
  b.op("aten::mul", 100, 200, 2);  // thread 2: no record yet
  b.counter("loss", 150, 1.0);
  auto live = std::make_shared<SessionData>(b.data());
  TimelineModel model(live);
  REQUIRE(model.tracks()[0].name == "thread 2");
  REQUIRE(model.warnings().size() == 1);  // one event on a thread without a record

  rt::prof::SessionGrowth growth;
  growth.ops = live->ops.size();
  growth.counters = live->counters.size();
  SessionData& d = *live;
  d.threads.push_back({2, 12, d.strings.intern("dataloader")});
  d.threads.push_back({1, 11, d.strings.intern("main")});
  d.ops.push_back({.start_ns = 10, .end_ns = 50, .thread = 1, .name = d.strings.intern("aten::add")});
  rt::prof::GpuActivityRecord kernel;
  kernel.start_ns = 60;
  kernel.end_ns = 90;
  kernel.stream = 7;
  kernel.name = d.strings.intern("gemm");
  d.gpu.push_back(kernel);
  d.counters.push_back({120, d.strings.intern("lr"), 0.1});
  d.steps.push_back({0, 0, 300});
  model.append(growth);
  std::vector<std::string> names;
  for (const Track& t : model.tracks()) names.push_back(t.name);
  REQUIRE(names == std::vector<std::string>{"steps", "main", "dataloader", "cuda:0 stream 7", "loss", "lr"});
  REQUIRE(model.warnings().empty());
  REQUIRE(*model.find(EventSource::Op, 0) == EventRef{2, 0, 0});  // thread 2's op, now the third track
  REQUIRE(*model.find(EventSource::Gpu, 0) == EventRef{3, 0, 0});
  require_same_model(model, TimelineModel(std::make_shared<const SessionData>(*live)));
}

TEST_CASE("a growth that does not continue the model is refused with the reason") {
  SessionBuilder b;
  b.op("aten::mul", 10, 20);
  auto live = std::make_shared<SessionData>(b.data());
  TimelineModel model(live);
  rt::prof::SessionGrowth growth;  // claims the data was empty before
  live->ops.push_back(live->ops[0]);
  REQUIRE_THROWS_AS(model.append(growth), rt::ValueError);
  REQUIRE_THROWS_WITH(model.append(growth), Catch::Contains("first new op is 0, but the model holds 1"));
  growth.ops = 1;
  growth.steps = 3;
  REQUIRE_THROWS_WITH(model.append(growth), Catch::Contains("first new step is 3"));
  growth.steps = 0;
  model.append(growth);
  REQUIRE(model.event_count() == 2);
}
