// Sorting, selection and scans: values against float64 references (NaN order, stable ties,
// cummax ties), finite-difference gradients, and the errors for bad dims and devices.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "rt/cuda.h"
#include "testing.h"

using rt::Tensor;
namespace rtt = rt::testing;
using Catch::Matchers::Contains;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor doubles(const std::vector<double>& v) { return rt::from_vector(v); }
Tensor longs(const std::vector<int64_t>& v, const rt::Shape& shape = {}) {
  return rt::from_vector(v, shape.empty() ? rt::Shape{int64_t(v.size())} : shape);
}
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

void require_values(const Tensor& t, const std::vector<double>& expected) {
  const std::vector<double> got = rtt::values(t);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i])) CHECK(std::isnan(got[i]));
    else CHECK(got[i] == expected[i]);
  }
}

}  // namespace

TEST_CASE("sort orders NaN above every number and keeps ties in input order", "[sort]") {
  const Tensor x = doubles({2, kNaN, -1, 2, kNaN, 0});
  auto [v, i] = x.sort();
  require_values(v, {-1, 0, 2, 2, kNaN, kNaN});
  CHECK(ints(i) == std::vector<int64_t>{2, 5, 0, 3, 1, 4});
  auto [vd, id] = rt::sort(x, 0, /*descending=*/true);
  require_values(vd, {kNaN, kNaN, 2, 2, 0, -1});
  CHECK(ints(id) == std::vector<int64_t>{1, 4, 0, 3, 5, 2});
  CHECK(ints(x.argsort()) == ints(i));
}

TEST_CASE("topk and kthvalue pick by rank along a dim", "[sort]") {
  const Tensor x = doubles({4, 1, 3, 9, 7, 5}).reshape({2, 3});
  auto [v, i] = x.topk(2, 1);
  require_values(v, {4, 3, 9, 7});
  CHECK(ints(i) == std::vector<int64_t>{0, 2, 0, 1});
  auto [k, ki] = x.kthvalue(2, 0, /*keepdim=*/true);
  CHECK(k.sizes() == rt::Shape{1, 3});
  require_values(k, {9, 7, 5});
  CHECK(ints(ki) == std::vector<int64_t>{1, 1, 1});
}

TEST_CASE("unique groups values and slices", "[sort]") {
  const auto r = rt::unique(longs({3, 1, 3, 2}), true, true, true);
  CHECK(ints(r.values) == std::vector<int64_t>{1, 2, 3});
  CHECK(ints(r.inverse_indices) == std::vector<int64_t>{2, 0, 2, 1});
  CHECK(ints(r.counts) == std::vector<int64_t>{1, 1, 2});
  const auto rows = rt::unique(longs({1, 2, 1, 2, 0, 5}, {3, 2}), true, false, true, 0);
  CHECK(ints(rows.values) == std::vector<int64_t>{0, 5, 1, 2});
  CHECK(ints(rows.counts) == std::vector<int64_t>{1, 2});
  const auto runs = rt::unique_consecutive(longs({1, 1, 2, 1}), false, true);
  CHECK(ints(runs.values) == std::vector<int64_t>{1, 2, 1});
  CHECK(ints(runs.counts) == std::vector<int64_t>{2, 1, 1});
}

TEST_CASE("searchsorted and bucketize find insertion points", "[sort]") {
  const Tensor seq = doubles({1, 3, 3, 5});
  const Tensor v = doubles({0, 3, 4, 9, kNaN});
  CHECK(ints(rt::searchsorted(seq, v)) == std::vector<int64_t>{0, 1, 3, 4, 4});
  CHECK(ints(rt::searchsorted(seq, v, false, true)) == std::vector<int64_t>{0, 3, 3, 4, 4});
  CHECK(ints(rt::bucketize(v, seq, false, true)) == std::vector<int64_t>{0, 3, 3, 4, 4});
  CHECK(rt::searchsorted(seq, v, /*out_int32=*/true).dtype() == rt::kInt32);
  CHECK_THROWS_WITH(rt::searchsorted(seq, v, false, true, "left"), Contains("side and right can't be set to opposites"));
}

TEST_CASE("nonzero, masked_select, take and take_along_dim", "[select]") {
  const Tensor x = doubles({0, 2, 0, 4, 5, 0}).reshape({2, 3});
  CHECK(ints(x.nonzero()) == std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  require_values(x.masked_select(x.gt(rt::scalar_tensor(1.0))), {2, 4, 5});
  require_values(x.take(longs({-1, 0, 4})), {0, 0, 5});
  require_values(x.take_along_dim(longs({2, 0}, {2, 1}), 1), {0, 4});
  CHECK_THROWS_WITH(x.take(longs({6})), Contains("take: index 6 is out of range for a tensor of 6 elements"));
}

TEST_CASE("scans: sums, products and running extremes", "[scan]") {
  const Tensor x = doubles({1, 3, 3, kNaN, 2});
  require_values(x.cumsum(0), {1, 4, 7, kNaN, kNaN});
  require_values(doubles({2, 0.5, 4}).cumprod(0), {2, 1, 4});
  auto [m, mi] = x.cummax(0);
  require_values(m, {1, 3, 3, kNaN, kNaN});
  CHECK(ints(mi) == std::vector<int64_t>{0, 1, 2, 3, 3});  // ties take the later index; NaN stays
  require_values(doubles({0, 0}).logcumsumexp(0), {0, std::log(2.0)});
  CHECK(rt::cumsum(longs({1, 2}).to(rt::kInt32), 0).dtype() == rt::kInt64);
  CHECK(rt::cumsum(longs({1, 2}), 0, rt::kFloat64).dtype() == rt::kFloat64);
}

TEST_CASE("gradients of sorting, selection and scans match finite differences", "[sort][scan][grad]") {
  rtt::run_grad_cases({
      {"sort", {{3, 4}}, [](const rt::TensorList& in) { return rt::sort(in[0], 1).first; }},
      {"sort_descending", {{3, 4}}, [](const rt::TensorList& in) { return rt::sort(in[0], 0, true).first; }},
      {"topk", {{3, 5}}, [](const rt::TensorList& in) { return rt::topk(in[0], 2, 1).first; }},
      {"kthvalue", {{4, 3}}, [](const rt::TensorList& in) { return rt::kthvalue(in[0], 2, 0).first; }},
      {"masked_select", {{3, 4}}, [](const rt::TensorList& in) { return in[0].masked_select(in[0].gt(rt::scalar_tensor(0.0))); }},
      {"take", {{3, 4}}, [](const rt::TensorList& in) { return in[0].take(longs({0, -1, 5, 5})); }},
      {"take_along_dim", {{3, 4}}, [](const rt::TensorList& in) { return in[0].take_along_dim(longs({1, 3, 0}, {3, 1}), 1); }},
      {"cumsum", {{3, 4}}, [](const rt::TensorList& in) { return rt::cumsum(in[0], 1); }},
      {"cumprod", {{3, 4}}, [](const rt::TensorList& in) { return rt::cumprod(in[0], 0); }},
      {"cummax", {{3, 4}}, [](const rt::TensorList& in) { return rt::cummax(in[0], 1).first; }},
      {"cummin", {{3, 4}}, [](const rt::TensorList& in) { return rt::cummin(in[0], 0).first; }},
      {"logcumsumexp", {{3, 4}}, [](const rt::TensorList& in) { return rt::logcumsumexp(in[0], 1); }},
  });
}

TEST_CASE("cumprod's gradient is exact where the input holds zeros", "[scan][grad]") {
  const Tensor x = doubles({2, 0, 3, 0, 4}).requires_grad_();
  rt::cumprod(x, 0).backward(doubles({1, 2, 3, 4, 5}));
  require_values(x.grad(), {1 + 0.0, 2 * 2 + 3 * 2 * 3, 0, 0, 0});
}

TEST_CASE("a bad dim names the op, the dim and the range", "[sort][scan]") {
  const Tensor x = rt::zeros({2, 3});
  for (const auto& [op, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"sort", [&] { rt::sort(x, 2); }},
           {"cumsum", [&] { rt::cumsum(x, -3); }},
           {"cummax", [&] { rt::cummax(x, 5); }},
           {"unique", [&] { rt::unique(x, true, false, false, 2); }}}) {
    INFO(op);
    CHECK_THROWS_AS(call(), rt::IndexError);
    CHECK_THROWS_WITH(call(), Contains(op + ": dimension") && Contains("expected a value in [-2, 1]"));
  }
}
