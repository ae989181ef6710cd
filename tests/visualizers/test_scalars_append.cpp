// ScalarSet::append (rt/viz/scalars.h): a set fed a growing session chunk by chunk (counter samples in any order,
// new counter names, steps closing while the open one is replaced) equals a set built from scratch on the same
// data; samples logged before a step's record arrived are tagged again; a growth that does not continue the set
// is refused.
#include <catch2/catch.hpp>

#include <random>

#include "live_growth.h"
#include "rt/error.h"
#include "rt/viz/scalars.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using fixtures::Arrival;
using fixtures::GrowingSession;
using fixtures::SessionBuilder;
using rt::prof::SessionData;

namespace {

void require_same_set(const ScalarSet& a, const ScalarSet& b) {
  REQUIRE(a.session_name() == b.session_name());
  REQUIRE(a.origin_ns() == b.origin_ns());
  REQUIRE(a.series().size() == b.series().size());
  for (size_t k = 0; k < a.series().size(); ++k) {
    INFO("series " << b.series()[k].name);
    REQUIRE(a.series()[k].name == b.series()[k].name);
    REQUIRE(a.series()[k].time_ns == b.series()[k].time_ns);
    REQUIRE(a.series()[k].step == b.series()[k].step);
    REQUIRE(a.series()[k].value == b.series()[k].value);
  }
}

// Steps and a "loss" per step from the generator, plus counters of other names at coarse (often equal) times,
// some before the first step.
SessionData counters_session(uint64_t seed) {
  SessionData d = *fixtures::generate_session({.ops = 2000, .threads = 2, .seed = seed});
  d.name = "live run";
  std::mt19937_64 rng(seed);
  const int64_t end = d.steps.back().end_ns;
  const char* names[] = {"lr", "grad norm", "samples/s", "a late name"};
  for (int i = 0; i < 600; ++i) {
    const int64_t t = int64_t(rng() % 300) * (end / 300) - (i % 50 == 0 ? end / 10 : 0);
    d.counters.push_back({t, d.strings.intern(names[i < 500 ? i % 3 : 3]), double(i)});
  }
  return d;
}

}  // namespace

TEST_CASE("a scalar set appended chunk by chunk equals one built from scratch, whatever the arrival order") {
  const SessionData all = counters_session(4);
  for (Arrival arrival : {Arrival::RecordOrder, Arrival::Jittered, Arrival::Shuffled}) {
    for (size_t max_chunk : {size_t(5), size_t(120)}) {
      INFO("arrival " << int(arrival) << ", chunks of up to " << max_chunk);
      GrowingSession growing(all, arrival, 17 + max_chunk);
      ScalarSet set(*growing.data());
      int chunks = 0;
      while (!growing.done()) {
        set.append(*growing.data(), growing.next(max_chunk));
        ++chunks;
        INFO("chunk " << chunks);
        require_same_set(set, ScalarSet(*growing.data()));
      }
      REQUIRE(chunks > 3);
      REQUIRE(set.series().size() == 5);
    }
  }
}

TEST_CASE("a sample logged before its step's record arrived is tagged again when the step comes") {
  SessionBuilder b;
  b.step(0, 0, 100);
  b.counter("loss", 50, 2.0);
  b.counter("loss", 150, 1.5);  // no step holds it yet: it belongs to step 0, the last one started
  SessionData& live = b.data();
  ScalarSet set(live);
  REQUIRE(set.find("loss")->step == std::vector<int64_t>{0, 0});

  rt::prof::SessionGrowth growth;
  growth.counters = live.counters.size();
  growth.steps = live.steps.size();
  live.steps.push_back({1, 120, 200});
  live.counters.push_back({130, live.strings.intern("loss"), 1.7});  // arrives out of time order
  live.counters.push_back({160, live.strings.intern("lr"), 0.1});
  set.append(live, growth);
  REQUIRE(set.find("loss")->time_ns == std::vector<int64_t>{50, 130, 150});
  REQUIRE(set.find("loss")->step == std::vector<int64_t>{0, 1, 1});
  REQUIRE(set.find("lr")->step == std::vector<int64_t>{1});
  require_same_set(set, ScalarSet(live));

  // The open step of a live read is replaced: here it turns out to start later than first read.
  growth = {.counters = live.counters.size(), .steps = 1};
  live.steps.back() = {1, 155, 210};
  set.append(live, growth);
  REQUIRE(set.find("loss")->step == std::vector<int64_t>{0, 0, 0});
  require_same_set(set, ScalarSet(live));
}

TEST_CASE("a scalar growth that does not continue the set is refused") {
  SessionBuilder b;
  b.counter("loss", 50, 2.0);
  ScalarSet set(b.data());
  rt::prof::SessionGrowth growth;
  REQUIRE_THROWS_AS(set.append(b.data(), growth), rt::ValueError);
  REQUIRE_THROWS_WITH(set.append(b.data(), growth),
                      Catch::Contains("first new counter sample is 0, but the set holds 1"));
  growth.counters = 1;
  growth.steps = 2;
  REQUIRE_THROWS_WITH(set.append(b.data(), growth), Catch::Contains("first new step is 2"));
}
