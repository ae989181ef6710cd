// Gradient statistics against a float64 reference, and the per-parameter grad-norm history.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "rt/debug/grad_norm_history.h"
#include "rt/debug/gradient_stats.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using debug::gradient_stats;

namespace {

struct Reference {
  double norm_sq = 0, lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nan = 0, inf = 0, finite = 0;
  std::vector<int64_t> bins;
};

Reference reference(const std::vector<double>& v, int nbins) {
  Reference r;
  for (double x : v) {
    if (std::isnan(x)) ++r.nan;
    else if (std::isinf(x)) ++r.inf;
    else {
      ++r.finite;
      r.norm_sq += x * x;
      r.sum += x;
      r.lo = std::min(r.lo, x);
      r.hi = std::max(r.hi, x);
    }
  }
  r.bins.assign(size_t(nbins), 0);
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    int64_t b = r.hi > r.lo ? int64_t(std::floor((x - r.lo) / (r.hi - r.lo) * nbins)) : 0;
    ++r.bins[size_t(std::clamp<int64_t>(b, 0, nbins - 1))];
  }
  return r;
}

}  // namespace

TEST_CASE("gradient stats match a float64 reference") {
  for (ScalarType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    DYNAMIC_SECTION(dtype_name(dt)) {
      Tensor t = testing::random({37, 23}, dt, -3, 5, 11);
      const auto s = gradient_stats(t, 16);
      const auto v = testing::values(t);
      const Reference r = reference(v, 16);
      CHECK(s.defined);
      CHECK(s.shape == Shape{37, 23});
      CHECK(s.dtype == dt);
      CHECK(s.numel == 37 * 23);
      CHECK(s.norm == Approx(std::sqrt(r.norm_sq)).epsilon(1e-12));
      CHECK(s.min == r.lo);
      CHECK(s.max == r.hi);
      CHECK(s.mean == Approx(r.sum / double(r.finite)).epsilon(1e-12));
      CHECK(s.nan_count == 0);
      CHECK(s.inf_count == 0);
      CHECK(s.histogram.lo == r.lo);
      CHECK(s.histogram.hi == r.hi);
      CHECK(s.histogram.counts == r.bins);
    }
  }
}

TEST_CASE("gradient stats count NaN and Inf and keep them out of min/max/mean/histogram") {
  Tensor base = testing::random({8, 12}, kFloat32, -1, 1, 12);
  float* p = base.data_ptr<float>();
  p[3] = NAN;
  p[17] = INFINITY;
  p[40] = -INFINITY;
  p[41] = NAN;
  Tensor t = base.t();  // non-contiguous
  REQUIRE_FALSE(t.is_contiguous());
  const auto s = gradient_stats(t);
  const Reference r = reference(testing::values(t), 32);
  CHECK(s.nan_count == 2);
  CHECK(s.inf_count == 2);
  CHECK(s.finite_count() == 92);
  CHECK(std::isnan(s.norm));
  CHECK(s.min == r.lo);
  CHECK(s.max == r.hi);
  CHECK(s.mean == Approx(r.sum / double(r.finite)).epsilon(1e-12));
  CHECK(s.histogram.counts == r.bins);
  int64_t total = 0;
  for (auto c : s.histogram.counts) total += c;
  CHECK(total == s.finite_count());
  CHECK_THAT(s.summary(), Catch::Contains("nan=2") && Catch::Contains("inf=2") && Catch::StartsWith("[12, 8] float32"));

  p[3] = 0.5f;
  p[41] = 0.25f;
  CHECK(gradient_stats(t).norm == INFINITY);  // Inf without NaN
}

TEST_CASE("gradient stats edge cases") {
  SECTION("undefined") {
    const auto s = gradient_stats(Tensor());
    CHECK_FALSE(s.defined);
    CHECK(s.summary() == "None");
  }
  SECTION("constant values fall in bin 0") {
    const auto s = gradient_stats(rt::full({5}, 2.5), 4);
    CHECK(s.histogram.counts == std::vector<int64_t>{5, 0, 0, 0});
    CHECK(s.norm == Approx(2.5 * std::sqrt(5.0)));
  }
  SECTION("all NaN: no finite values") {
    const auto s = gradient_stats(rt::full({3}, NAN), 8);
    CHECK(s.nan_count == 3);
    CHECK(std::isnan(s.min));
    CHECK(std::isnan(s.mean));
    CHECK(s.histogram.counts.empty());
  }
  SECTION("values near the float64 limit do not overflow the norm") {
    Tensor t = tensor({1e300, -1e300, 1e300, 1e300});
    const auto s = gradient_stats(t, 2);
    CHECK(s.norm == Approx(2e300));
    CHECK(s.histogram.counts == std::vector<int64_t>{1, 3});
  }
  SECTION("a broadcast (stride 0) view and a zero-dim tensor") {
    Tensor e = tensor({1.0f, 2.0f}).expand({3, 2});
    const auto s = gradient_stats(e, 2);
    CHECK(s.numel == 6);
    CHECK(s.mean == Approx(1.5));
    CHECK(s.histogram.counts == std::vector<int64_t>{3, 3});
    CHECK(gradient_stats(rt::scalar_tensor(-4.0)).norm == 4.0);
  }
  SECTION("bins == 0 skips the histogram; negative bins are an error") {
    CHECK(gradient_stats(rt::ones({3}), 0).histogram.counts.empty());
    CHECK_THROWS_AS(gradient_stats(rt::ones({3}), -1), ValueError);
  }
}

TEST_CASE("grad norm history flags vanishing and exploding parameters") {
  Tensor a = rt::zeros({4}).requires_grad_();
  Tensor b = rt::zeros({2}).requires_grad_();
  Tensor c = rt::zeros({2}).requires_grad_();  // never gets a gradient
  debug::GradNormHistory history;
  auto record = [&](double ga, double gb) {
    a.set_grad(rt::full({4}, ga / 2));  // norm ga
    b.set_grad(rt::full({2}, gb / std::sqrt(2.0)));
    return history.record({{"a", a}, {"b", b}, {"c", c}});
  };
  for (int i = 0; i < 3; ++i) {
    const auto& step = record(1.0, 1.0);
    CHECK(step.step == i);
    CHECK(step.vanishing().empty());
    CHECK(step.exploding().empty());
  }
  auto step = record(20.0, 5.0);  // a: 20x its median; b: 5x (under the 10x ratio)
  CHECK(step.params[0].norm == Approx(20.0));
  CHECK(step.params[0].running_median == Approx(1.0));
  CHECK(step.exploding() == std::vector<std::string>{"a"});
  step = record(1e-9, 2e3);
  CHECK(step.vanishing() == std::vector<std::string>{"a"});
  CHECK(step.exploding() == std::vector<std::string>{"b"});
  CHECK_FALSE(step.params[2].has_grad);
  CHECK(std::isnan(step.params[2].norm));
  a.set_grad(rt::full({4}, NAN));
  CHECK(history.record({{"a", a}}).exploding() == std::vector<std::string>{"a"});

  const auto series = history.series("b");
  REQUIRE(series.size() == 6);
  CHECK(series[3] == Approx(5.0));
  CHECK(std::isnan(series[5]));  // b absent from the last step
  CHECK(history.steps().size() == 6);
  CHECK_THROWS_AS(debug::GradNormHistory({.exploding_ratio = 0}), ValueError);
  history.clear();
  CHECK(history.steps().empty());
}
