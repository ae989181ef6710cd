// Scalars: series per counter with their steps, TensorBoard's debiased smoothing, min/max
// downsampling that keeps spikes, and overlays of several sessions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "rt/error.h"
#include "rt/viz/scalars.h"
#include "test_timeline_fixtures.h"

using namespace rt::viz;
using fixtures::SessionBuilder;

TEST_CASE("series per counter name, sorted by time, each sample tagged with its step") {
  SessionBuilder b;
  b.data().name = "run a";
  b.data().start_ns = 100;
  b.step(0, 100, 200).step(1, 200, 300).step(2, 400, 500);
  b.counter("loss", 250, 2.0).counter("loss", 150, 3.0).counter("lr", 50, 0.1);
  b.counter("loss", 350, 1.5).counter("loss", 450, 1.0);
  const ScalarSet set(b.data());

  REQUIRE(set.series().size() == 2);
  REQUIRE(set.series()[0].name == "loss");
  const ScalarSeries& loss = *set.find("loss");
  REQUIRE(loss.time_ns == std::vector<int64_t>{150, 250, 350, 450});
  REQUIRE(loss.value == std::vector<double>{3.0, 2.0, 1.5, 1.0});
  REQUIRE(loss.step == std::vector<int64_t>{0, 1, 1, 2});  // 350: after step 1 ended, before step 2
  REQUIRE(set.find("lr")->step == std::vector<int64_t>{-1});
  REQUIRE(set.find("accuracy") == nullptr);
  REQUIRE(set.session_name() == "run a");
  REQUIRE(set.origin_ns() == 100);
}

TEST_CASE("smoothing follows TensorBoard's debiased exponential moving average") {
  const std::vector<double> v{1.0, 2.0, 4.0};
  const double w = 0.6;
  const std::vector<double> s = smooth(v, w);
  // last_n = last_{n-1} * w + (1 - w) * v_n, divided by 1 - w^n.
  const double l1 = 0.4 * 1.0, l2 = l1 * w + 0.4 * 2.0, l3 = l2 * w + 0.4 * 4.0;
  REQUIRE(s[0] == Approx(l1 / (1 - w)));
  REQUIRE(s[0] == Approx(1.0));  // debiasing: the first value is itself
  REQUIRE(s[1] == Approx(l2 / (1 - w * w)));
  REQUIRE(s[2] == Approx(l3 / (1 - w * w * w)));

  REQUIRE(smooth(v, 0.0) == v);
  const std::vector<double> mean = smooth(v, 1.0);
  REQUIRE(mean[1] == Approx(1.5));
  REQUIRE(mean[2] == Approx(7.0 / 3.0));
  REQUIRE(smooth(std::vector<double>{0.3, 0.3, 0.3}, 0.9) == std::vector<double>{0.3, 0.3, 0.3});
  REQUIRE(smooth(std::vector<double>{}, 0.5).empty());

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> with_nan = smooth(std::vector<double>{1.0, nan, 3.0}, 0.5);
  REQUIRE(std::isnan(with_nan[1]));
  REQUIRE(with_nan[2] == Approx((0.5 * 0.5 + 0.5 * 3.0) / (1 - 0.25)));  // the NaN is skipped

  REQUIRE_THROWS_AS(smooth(v, 1.5), rt::ValueError);
  REQUIRE_THROWS_AS(smooth(v, -0.1), rt::ValueError);
  REQUIRE_THROWS_AS(smooth(v, nan), rt::ValueError);
}

TEST_CASE("downsampling keeps min, max, first and last per pixel, plus the samples off each edge") {
  std::vector<int64_t> x;
  std::vector<double> y;
  for (int i = 0; i < 1000; ++i) {
    x.push_back(i);
    y.push_back(i == 537 ? 50.0 : i == 538 ? -50.0 : double(i % 10));
  }
  std::vector<ScalarColumn> columns;
  downsample(x, y, 100, 899, 100.0, columns);
  REQUIRE(columns.front().pixel == -1);
  REQUIRE(columns.front().first == y[99]);
  REQUIRE(columns.back().pixel == 100);
  REQUIRE(columns.back().first == y[900]);
  REQUIRE(columns.size() == 102);
  uint32_t inside = 0;
  double highest = -1e9, lowest = 1e9;
  for (size_t k = 1; k + 1 < columns.size(); ++k) {
    const ScalarColumn& c = columns[k];
    REQUIRE(c.pixel == int64_t(k - 1));
    REQUIRE(c.min <= c.first);
    REQUIRE(c.max >= c.last);
    inside += c.count;
    highest = std::max(highest, c.max);
    lowest = std::min(lowest, c.min);
  }
  REQUIRE(inside == 800);
  REQUIRE(highest == 50.0);
  REQUIRE(lowest == -50.0);
  const ScalarColumn& spike = columns[1 + size_t((537 - 100) * 100 / 799)];
  REQUIRE(spike.max == 50.0);

  downsample(x, y, 0, 999, 2000.0, columns);  // more pixels than samples: one column each
  REQUIRE(columns.size() == 1000);
  REQUIRE(columns.back().pixel == 1999);

  REQUIRE_THROWS_AS(downsample(x, std::vector<double>(3), 0, 1, 10, columns), rt::ValueError);
  REQUIRE_THROWS_AS(downsample(x, y, 5, 1, 10, columns), rt::ValueError);
  REQUIRE_THROWS_AS(downsample(x, y, 0, 1, 0, columns), rt::ValueError);
  REQUIRE_THROWS_AS(downsample(std::vector<int64_t>{2, 1}, std::vector<double>{0, 0}, 0, 1, 10, columns),
                    rt::ValueError);
}

TEST_CASE("a pixel of only NaNs reports NaN bounds and keeps its count") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<ScalarColumn> columns;
  downsample(std::vector<int64_t>{0, 1, 10}, std::vector<double>{nan, nan, 2.0}, 0, 10, 2.0, columns);
  REQUIRE(columns.size() == 2);
  REQUIRE(std::isnan(columns[0].min));
  REQUIRE(columns[0].count == 2);
  REQUIRE(columns[1].min == 2.0);
}

TEST_CASE("overlays align the same counter of several sessions by step or by time since start") {
  SessionBuilder a, b;
  a.data().name = "baseline";
  a.data().start_ns = 1000;
  a.step(0, 1000, 1100).step(1, 1100, 1200);
  a.counter("loss", 1050, 2.0).counter("loss", 1150, 1.0).counter("loss", 900, 9.0);
  b.data().start_ns = 50000;
  b.step(0, 50000, 50500).step(1, 50500, 51000);
  b.counter("loss", 50400, 1.8).counter("loss", 50900, 0.8);
  SessionBuilder c;  // no loss at all
  c.counter("lr", 0, 0.1);
  const ScalarSet sa(a.data()), sb(b.data()), sc(c.data());
  const ScalarSet* sessions[] = {&sa, &sc, &sb};

  const auto by_step = overlay(sessions, "loss", OverlayAxis::Step);
  REQUIRE(by_step.size() == 2);
  REQUIRE(by_step[0].label == "baseline");
  REQUIRE(by_step[0].x == std::vector<int64_t>{0, 1});  // the sample before step 0 is left out
  REQUIRE(by_step[0].y == std::vector<double>{2.0, 1.0});
  REQUIRE(by_step[1].session == 2);
  REQUIRE(by_step[1].label == "session 2");
  REQUIRE(by_step[1].x == std::vector<int64_t>{0, 1});

  const auto by_time = overlay(sessions, "loss", OverlayAxis::RelativeTime);
  REQUIRE(by_time[0].x == std::vector<int64_t>{-100, 50, 150});
  REQUIRE(by_time[1].x == std::vector<int64_t>{400, 900});

  const auto smoothed = overlay(sessions, "loss", OverlayAxis::Step, 0.5);
  REQUIRE(smoothed[0].y == smooth(std::vector<double>{2.0, 1.0}, 0.5));
}
