// Gradient histograms in sessions (rt/prof/gradient_histograms.h): recorded only while a session records, with
// the open step and gradient_stats' numbers; read piece by piece through deltas; carried through rank merges;
// exported as trace metadata that the import reads back; and the consistency rule readers apply.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "chrome_trace_validator.h"
#include "rt/debug/gradient_stats.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/session.h"
#include "rt/prof/session_delta.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using prof::GradientHistogramRecord;
using prof::Session;
using prof::SessionData;

namespace {

prof::SessionOptions options() {
  prof::SessionOptions o;
  o.cupti = prof::CuptiMode::Off;
  o.flush_interval = std::chrono::milliseconds(20);
  return o;
}

const GradientHistogramRecord* find(const SessionData& d, const std::string& name, int64_t step) {
  for (const auto& h : d.gradient_histograms)
    if (d.strings.at(h.name) == name && h.step == step) return &h;
  return nullptr;
}

void require_matches(const GradientHistogramRecord& h, const Tensor& grad, int bins) {
  const debug::GradientStats s = debug::gradient_stats(grad, bins);
  CHECK(h.numel == s.numel);
  if (std::isnan(s.norm)) CHECK(std::isnan(h.norm));
  else CHECK(h.norm == s.norm);
  CHECK(h.lo == s.histogram.lo);
  CHECK(h.hi == s.histogram.hi);
  CHECK(h.nan_count == s.nan_count);
  CHECK(h.inf_count == s.inf_count);
  CHECK(h.counts == s.histogram.counts);
}

GradientHistogramRecord record(SessionData& d, const std::string& name, int64_t step, int64_t time_ns) {
  GradientHistogramRecord h;
  h.step = step;
  h.time_ns = time_ns;
  h.name = d.strings.intern(name);
  h.numel = 6;
  h.norm = 2.5;
  h.lo = -1;
  h.hi = 2;
  h.nan_count = 1;
  h.counts = {2, 0, 3};
  return h;
}

}  // namespace

TEST_CASE("record_gradient_histogram records nothing, and reads no gradient, while no session records") {
  REQUIRE_FALSE(prof::profiling_active());
  CHECK_FALSE(prof::record_gradient_histogram("fc.weight", ones({4, 4})));
  // Nothing is left behind for the next session either.
  Session s(options());
  s.start();
  s.stop();
  CHECK(s.data().gradient_histograms.empty());
}

TEST_CASE("a session records each gradient's histogram with its open step and gradient_stats' numbers") {
  Tensor w0 = testing::random({16, 8}, kFloat32, -2, 3, 1);
  Tensor w1 = testing::random({16, 8}, kFloat32, -1, 1, 2);
  Tensor bias = testing::random({8}, kFloat64, -1, 1, 3);
  Tensor bad = testing::random({5, 4}, kFloat32, -1, 1, 4);
  bad.data_ptr<float>()[2] = NAN;
  bad.data_ptr<float>()[7] = INFINITY;

  Session s(options());
  s.start();
  CHECK(prof::record_gradient_histogram("fc.weight", w0));
  CHECK(prof::record_gradient_histogram("fc.bias", bias, 8));
  CHECK_FALSE(prof::record_gradient_histogram("unused.weight", Tensor()));  // no gradient: nothing recorded
  s.step();
  CHECK(prof::record_gradient_histogram("fc.weight", w1));
  CHECK(prof::record_gradient_histogram("fc.bias", bad.t(), 4));  // non-contiguous, with NaN and Inf
  s.stop();
  CHECK_FALSE(prof::record_gradient_histogram("fc.weight", w0));  // stopped

  const SessionData& d = s.data();
  REQUIRE(d.gradient_histograms.size() == 4);
  CHECK(s.counts().gradient_histograms == 4);
  for (size_t i = 1; i < d.gradient_histograms.size(); ++i)
    CHECK(d.gradient_histograms[i - 1].time_ns <= d.gradient_histograms[i].time_ns);
  for (const auto& h : d.gradient_histograms) {
    CHECK(h.time_ns >= d.start_ns);
    CHECK(h.time_ns <= d.end_ns);
    CHECK(prof::gradient_histogram_problem(h).empty());
  }
  const auto* a = find(d, "fc.weight", 0);
  const auto* b = find(d, "fc.bias", 0);
  const auto* c = find(d, "fc.weight", 1);
  const auto* e = find(d, "fc.bias", 1);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  REQUIRE(e);
  require_matches(*a, w0, 32);
  CHECK(a->counts.size() == 32);
  require_matches(*b, bias, 8);
  require_matches(*c, w1, 32);
  require_matches(*e, bad.t(), 4);
  CHECK(e->nan_count == 1);
  CHECK(e->inf_count == 1);
  CHECK(std::isnan(e->norm));
  int64_t sum = 0;
  for (int64_t n : e->counts) sum += n;
  CHECK(sum == 20 - 2);
}

TEST_CASE("record_gradient_histogram refuses bad bins and names, recording or not") {
  CHECK_THROWS_WITH(prof::record_gradient_histogram("w", ones({2}), 0), Catch::Contains("bins is 0"));
  CHECK_THROWS_WITH(prof::record_gradient_histogram("w", ones({2}), prof::kMaxGradientBins + 1),
                    Catch::Contains("it must be 1 to 4096"));
  CHECK_THROWS_WITH(prof::record_gradient_histogram("", ones({2})), Catch::Contains("name is empty"));
}

TEST_CASE("a gradient with no finite value has empty counts and a zero range") {
  Tensor g = full({3}, NAN);
  Session s(options());
  s.start();
  REQUIRE(prof::record_gradient_histogram("all_nan", g));
  s.stop();
  REQUIRE(s.data().gradient_histograms.size() == 1);
  const auto& h = s.data().gradient_histograms[0];
  CHECK(h.counts.empty());
  CHECK(h.lo == 0);
  CHECK(h.hi == 0);
  CHECK(h.nan_count == 3);
  CHECK(prof::gradient_histogram_problem(h).empty());
}

TEST_CASE("deltas carry the histograms drained since the cursor, concatenated they equal snapshot()") {
  Session s(options());
  s.start();
  SessionData data;
  prof::SnapshotCursor cursor;
  auto read = [&] {
    prof::SessionDelta delta = s.snapshot_since(cursor);
    cursor = delta.cursor;
    if (delta.reset) {
      data = std::move(delta.records);
      return prof::SessionGrowth{};
    }
    return prof::append_delta(data, std::move(delta));
  };
  read();
  CHECK(data.gradient_histograms.empty());
  REQUIRE(prof::record_gradient_histogram("layer.0.weight", ones({3, 3})));
  prof::SessionGrowth g = read();
  CHECK(g.records_changed);
  CHECK(g.gradient_histograms == 0);
  REQUIRE(data.gradient_histograms.size() == 1);
  CHECK(data.strings.at(data.gradient_histograms[0].name) == "layer.0.weight");
  CHECK(data.gradient_histograms[0].step == 0);

  g = read();  // nothing new
  CHECK(g.gradient_histograms == 1);
  CHECK(data.gradient_histograms.size() == 1);

  s.step();
  REQUIRE(prof::record_gradient_histogram("layer.0.weight", full({3, 3}, 2.0)));
  REQUIRE(prof::record_gradient_histogram("layer.1.weight", ones({2})));
  g = read();
  CHECK(g.gradient_histograms == 1);
  REQUIRE(data.gradient_histograms.size() == 3);
  CHECK(data.gradient_histograms[1].step == 1);
  CHECK(data.strings.at(data.gradient_histograms[2].name) == "layer.1.weight");

  const SessionData snap = s.snapshot();
  REQUIRE(snap.gradient_histograms.size() == data.gradient_histograms.size());
  for (size_t i = 0; i < snap.gradient_histograms.size(); ++i) {
    CHECK(snap.strings.at(snap.gradient_histograms[i].name) == data.strings.at(data.gradient_histograms[i].name));
    CHECK(snap.gradient_histograms[i].counts == data.gradient_histograms[i].counts);
    CHECK(snap.gradient_histograms[i].time_ns == data.gradient_histograms[i].time_ns);
  }
  s.stop();
  prof::SessionDelta after = s.snapshot_since(cursor);  // stop() sorted: a reset with everything
  CHECK(after.reset);
  CHECK(after.records.gradient_histograms.size() == 3);
}

TEST_CASE("a cursor claiming more histograms than the session holds is reported") {
  Session s(options());
  s.start();
  prof::SnapshotCursor c = s.snapshot_since({}).cursor;
  c.gradient_histograms = 5;
  CHECK_THROWS_WITH(s.snapshot_since(c), Catch::Contains("5 gradient histograms"));
  s.stop();
}

TEST_CASE("rank merges carry every rank's histograms with rank-prefixed names, as counters") {
  std::vector<prof::RankSession> ranks(2);
  for (int r = 0; r < 2; ++r) {
    ranks[size_t(r)].rank = r;
    SessionData& d = ranks[size_t(r)].data;
    d.start_ns = 100;
    d.end_ns = 1000;
    d.metadata["host"] = "h";
    d.gradient_histograms.push_back(record(d, "fc.weight", 0, 200 + r));
    d.gradient_histograms.push_back(record(d, "fc.weight", 1, 600 + r));
  }
  const SessionData m = prof::merge_rank_sessions(std::move(ranks));
  REQUIRE(m.gradient_histograms.size() == 4);
  CHECK(m.strings.at(m.gradient_histograms[0].name) == "rank 0 · fc.weight");
  CHECK(m.strings.at(m.gradient_histograms[1].name) == "rank 1 · fc.weight");
  CHECK(m.gradient_histograms[1].time_ns == 201);  // one host: recorded times kept
  CHECK(m.gradient_histograms[2].step == 1);
  CHECK(m.gradient_histograms[3].counts == std::vector<int64_t>{2, 0, 3});
}

TEST_CASE("the Chrome export keeps histograms as trace metadata that Perfetto ignores and the import reads back") {
  SessionData d = rt::test::make_trace_session();
  d.gradient_histograms.push_back(record(d, "encoder.0.weight", 0, d.start_ns + 10));
  GradientHistogramRecord nan = record(d, "encoder.0.bias", 1, d.start_ns + 20);
  nan.norm = std::nan("");
  d.gradient_histograms.push_back(nan);
  GradientHistogramRecord inf = record(d, "encoder.0.bias", 2, d.start_ns + 30);
  inf.norm = INFINITY;
  inf.nan_count = 0;
  inf.inf_count = 1;
  d.gradient_histograms.push_back(inf);

  const std::string json = prof::chrome_trace_json(d);
  REQUIRE(rt::test::validate_chrome_trace(json).empty());
  const auto doc = nlohmann::json::parse(json);  // strict JSON: no NaN or Infinity literals
  REQUIRE(doc.contains("rtGradientHistograms"));
  const auto& rows = doc["rtGradientHistograms"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["name"] == "encoder.0.weight");
  CHECK(rows[0]["counts"] == nlohmann::json::array({2, 0, 3}));
  CHECK(rows[1]["norm"] == "nan");
  CHECK(rows[2]["norm"] == "inf");

  const prof::ChromeImport back = prof::import_chrome_trace_text(json, "grads.json");
  const SessionData& r = back.session;
  CHECK(r.metadata.count("rtGradientHistograms") == 0);
  REQUIRE(r.gradient_histograms.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    const auto &x = d.gradient_histograms[i], &y = r.gradient_histograms[i];
    CHECK(r.strings.at(y.name) == d.strings.at(x.name));
    CHECK(y.step == x.step);
    CHECK(y.time_ns - r.start_ns == x.time_ns - d.start_ns);
    CHECK(y.numel == x.numel);
    CHECK(y.lo == x.lo);
    CHECK(y.hi == x.hi);
    CHECK(y.nan_count == x.nan_count);
    CHECK(y.inf_count == x.inf_count);
    CHECK(y.counts == x.counts);
  }
  CHECK(r.gradient_histograms[0].norm == 2.5);
  CHECK(std::isnan(r.gradient_histograms[1].norm));
  CHECK(r.gradient_histograms[2].norm == INFINITY);
}

TEST_CASE("gradient_histogram_problem names what makes a record inconsistent") {
  SessionData d;
  GradientHistogramRecord ok = record(d, "w", 0, 0);
  CHECK(prof::gradient_histogram_problem(ok).empty());
  auto with = [&](auto change) {
    GradientHistogramRecord r = ok;
    change(r);
    return prof::gradient_histogram_problem(r);
  };
  CHECK_THAT(with([](auto& r) { r.numel = -1; }), Catch::Contains("negative"));
  CHECK_THAT(with([](auto& r) { r.nan_count = 7; }), Catch::Contains("7 NaN"));
  CHECK_THAT(with([](auto& r) { r.counts[1] = -1; }), Catch::Contains("negative"));
  CHECK_THAT(with([](auto& r) { r.counts[1] = 1; }), Catch::Contains("exceed"));
  CHECK_THAT(with([](auto& r) { r.counts[1] = 0; r.counts[2] = 2; }), Catch::Contains("sum to 4"));
  CHECK_THAT(with([](auto& r) { r.lo = 3; }), Catch::Contains("not a finite interval"));
  CHECK_THAT(with([](auto& r) { r.hi = INFINITY; }), Catch::Contains("not a finite interval"));
  CHECK_THAT(with([](auto& r) { r.counts.assign(5000, 0); }), Catch::Contains("5000 bins"));
}
