#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "philox.h"
#include "rt/parallel.h"
#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::testing::require_close;
using rt::testing::values;

namespace {

struct Moments {
  double mean = 0, var = 0, min = 0, max = 0;
};

Moments moments(const Tensor& t) {
  const auto v = values(t);
  Moments m;
  m.min = *std::min_element(v.begin(), v.end());
  m.max = *std::max_element(v.begin(), v.end());
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size() - 1);
  return m;
}

// Draws from every random factory in a fixed order.
std::vector<std::vector<double>> draw_all() {
  rt::manual_seed(1234);
  std::vector<Tensor> r;
  r.push_back(rt::rand({70001}));
  r.push_back(rt::randn({50003}));
  r.push_back(rt::randn({9}, rt::kFloat64));
  r.push_back(rt::rand({40000}, rt::kFloat16));
  r.push_back(rt::randn({33333}, rt::kBFloat16));
  r.push_back(rt::rand({40001}, rt::kFloat64));
  r.push_back(rt::randint(-5, 17, {60000}));
  r.push_back(rt::randperm(1000));
  r.push_back(rt::bernoulli(rt::full({50000}, 0.3)));
  Tensor u = rt::empty({300, 200});
  r.push_back(rt::uniform_(u, -2, 3));
  Tensor nt = rt::empty({200, 300}, rt::kFloat64).t();
  r.push_back(rt::normal_(nt, 1, 2));
  r.push_back(rt::rand_like(u));
  r.push_back(rt::randn_like(nt));
  std::vector<std::vector<double>> out;
  for (const Tensor& t : r) out.push_back(values(t));
  return out;
}

}  // namespace

TEST_CASE("creation: philox4x32-10 matches the Random123 known-answer vectors") {
  uint32_t out[4];
  rt::philox4x32(0, 0, out);
  CHECK(std::vector<uint32_t>(out, out + 4) == std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  const auto ones = rt::detail::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu});
  CHECK(ones == rt::detail::PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  const auto pi = rt::detail::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u});
  CHECK(pi == rt::detail::PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  rt::philox4x32(1, 0, out);
  CHECK(out[0] != 0x6627e8d5u);
}

TEST_CASE("creation: generator reserves counters and reseeds") {
  rt::Generator g(7);
  CHECK(g.seed() == 7);
  CHECK(g.reserve(10) == 0);
  CHECK(g.reserve(5) == 10);
  CHECK(g.offset() == 15);
  g.manual_seed(9);
  CHECK(g.seed() == 9);
  CHECK(g.offset() == 0);
  CHECK(&rt::default_generator() == &rt::default_generator());
  rt::manual_seed(5);
  const uint64_t before = rt::default_generator().offset();
  rt::rand({10});
  CHECK(rt::default_generator().offset() == before + 3);  // ceil(10 / 4) counters
  rt::randn({3}, rt::kFloat64);
  CHECK(rt::default_generator().offset() == before + 5);  // float64: 2 per counter
}

TEST_CASE("creation: random results depend only on the seed and call sequence") {
  rt::set_num_threads(1);
  const auto one = draw_all();
  rt::set_num_threads(4);
  const auto four = draw_all();
  rt::set_num_threads(3);
  const auto three = draw_all();
  rt::set_num_threads(0);
  REQUIRE(one.size() == four.size());
  for (size_t k = 0; k < one.size(); ++k) {
    INFO("draw " << k);
    CHECK(one[k] == four[k]);
    CHECK(one[k] == three[k]);
  }
  rt::manual_seed(1);
  const auto a = values(rt::rand({8})), b = values(rt::rand({8}));
  CHECK(a != b);
  rt::manual_seed(2);
  CHECK(values(rt::rand({8})) != a);
  rt::manual_seed(1);
  CHECK(values(rt::rand({8})) == a);
  // A prefix of a longer draw: element i always comes from counter offset + i / 4.
  rt::manual_seed(1);
  const auto longer = values(rt::rand({20}));
  CHECK(std::equal(a.begin(), a.end(), longer.begin()));
}

TEST_CASE("creation: rand and randn moments") {
  rt::manual_seed(0);
  for (auto dt : {rt::kFloat32, rt::kFloat64, rt::kFloat16, rt::kBFloat16}) {
    INFO(rt::dtype_name(dt));
    const Tensor u = rt::rand({200000}, dt);
    CHECK(u.dtype() == dt);
    const auto mu = moments(u);
    CHECK(mu.min >= 0.0);
    CHECK(mu.max < 1.0);
    CHECK(mu.mean == Approx(0.5).margin(0.005));
    CHECK(mu.var == Approx(1.0 / 12).margin(0.002));
    const Tensor z = rt::randn({200000}, dt);
    const auto mz = moments(z);
    CHECK(mz.mean == Approx(0.0).margin(0.01));
    CHECK(mz.var == Approx(1.0).margin(0.02));
    const auto zv = values(z);
    const double tail = double(std::count_if(zv.begin(), zv.end(), [](double v) { return std::abs(v) > 2; })) / 2e5;
    CHECK(tail == Approx(0.0455).margin(0.003));
  }
  const Tensor r = rt::rand({2, 3}, rt::TensorOptions().with_requires_grad());
  CHECK(r.requires_grad());
  CHECK(r.sizes() == Shape{2, 3});
  CHECK(rt::randn({0, 4}).numel() == 0);
}

TEST_CASE("creation: randint, randperm and bernoulli") {
  rt::manual_seed(3);
  const Tensor i = rt::randint(-3, 4, {70000});
  CHECK(i.dtype() == rt::kInt64);
  const auto mi = moments(i);
  REQUIRE(mi.min == -3);
  REQUIRE(mi.max == 3);
  std::vector<int> counts(7, 0);
  for (double v : values(i)) counts[size_t(int(v) + 3)]++;
  for (int c : counts) CHECK(c == Approx(10000).margin(400));
  CHECK(rt::randint(0, 256, {5}, rt::kUInt8).dtype() == rt::kUInt8);
  CHECK(rt::randint(0, 10, {5}, rt::kFloat32).dtype() == rt::kFloat32);
  const int64_t big = int64_t(1) << 62;
  const auto wide = values(rt::randint(-big, big, {1000}));
  CHECK(*std::max_element(wide.begin(), wide.end()) > double(big) / 2);

  const auto p = values(rt::randperm(500));
  std::vector<double> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> iota(500);
  std::iota(iota.begin(), iota.end(), 0.0);
  CHECK(sorted == iota);
  CHECK(p != iota);
  CHECK(rt::randperm(0).numel() == 0);
  CHECK(values(rt::randperm(1)) == std::vector<double>{0});
  CHECK(rt::randperm(10, rt::kInt32).dtype() == rt::kInt32);
  // Every position sees every value about equally often.
  std::vector<int> first(4, 0);
  for (int k = 0; k < 4000; ++k) first[size_t(rt::randperm(4).select(0, 0).item<int64_t>())]++;
  for (int c : first) CHECK(c == Approx(1000).margin(120));

  const Tensor probs = rt::tensor({0.0, 1.0, 0.25}, {3, 1}).expand({3, 40000});
  const Tensor b = rt::bernoulli(probs);
  CHECK(b.dtype() == rt::kFloat64);
  const auto row_mean = values(b.mean({1}));
  CHECK(row_mean[0] == 0.0);
  CHECK(row_mean[1] == 1.0);
  CHECK(row_mean[2] == Approx(0.25).margin(0.01));
  CHECK(rt::bernoulli(rt::full({4}, 0.5, rt::kFloat16)).dtype() == rt::kFloat16);
}

TEST_CASE("creation: uniform_, normal_ and the _like factories") {
  rt::manual_seed(4);
  Tensor u = rt::empty({100000});
  const uint32_t v0 = u.version();
  rt::uniform_(u, -2, 3);
  CHECK(u.version() > v0);
  const auto mu = moments(u);
  CHECK(mu.min >= -2);
  CHECK(mu.max < 3);
  CHECK(mu.mean == Approx(0.5).margin(0.03));
  Tensor n = rt::empty({400, 250}, rt::kFloat64).t();  // non-contiguous
  rt::normal_(n, 5, 2);
  const auto mn = moments(n);
  CHECK(mn.mean == Approx(5).margin(0.03));
  CHECK(std::sqrt(mn.var) == Approx(2).margin(0.03));
  Tensor c = rt::empty({3});
  rt::normal_(c, 1.5, 0);
  CHECK(values(c) == std::vector<double>{1.5, 1.5, 1.5});

  const Tensor h = rt::zeros({2, 5}, rt::kFloat16);
  CHECK(rt::rand_like(h).dtype() == rt::kFloat16);
  CHECK(rt::randn_like(h).sizes() == Shape{2, 5});
  CHECK(rt::randn_like(h, rt::kFloat64).dtype() == rt::kFloat64);
}

TEST_CASE("creation: random errors name the op") {
  CHECK_THROWS_AS(rt::rand({2}, rt::kInt64), rt::DTypeError);
  CHECK_THROWS_WITH(rt::randn({2}, rt::kInt32), Catch::Contains("randn") && Catch::Contains("int32"));
  CHECK_THROWS_WITH(rt::rand_like(rt::zeros({2}, rt::kInt64)), Catch::Contains("rand_like"));
  CHECK_THROWS_WITH(rt::randint(5, 5, {2}), Catch::Contains("randint") && Catch::Contains("low=5"));
  CHECK_THROWS_WITH(rt::randint(0, 300, {2}, rt::kUInt8), Catch::Contains("randint") && Catch::Contains("uint8"));
  CHECK_THROWS_AS(rt::randint(0, 3, {-1}), rt::ValueError);
  CHECK_THROWS_WITH(rt::randperm(-1), Catch::Contains("randperm"));
  CHECK_THROWS_AS(rt::randperm(3000, rt::kFloat16), rt::ValueError);
  CHECK_THROWS_WITH(rt::bernoulli(rt::tensor({0.5, 1.5}, {2})), Catch::Contains("bernoulli") && Catch::Contains("1.5"));
  CHECK_THROWS_AS(rt::bernoulli(rt::zeros({2}, rt::kInt64)), rt::DTypeError);
  Tensor t = rt::zeros({3});
  CHECK_THROWS_WITH(rt::uniform_(t, 1, 0), Catch::Contains("uniform_"));
  CHECK_THROWS_WITH(rt::normal_(t, 0, -1), Catch::Contains("normal_"));
  Tensor i = rt::zeros({3}, rt::kInt64);
  CHECK_THROWS_AS(rt::uniform_(i), rt::DTypeError);
  Tensor leaf = rt::zeros({3}).requires_grad_();
  CHECK_THROWS_AS(rt::normal_(leaf), rt::AutogradError);
  {
    rt::NoGradGuard no_grad;
    rt::normal_(leaf);  // what nn::init does
  }
  CHECK(leaf.requires_grad());
}

TEST_CASE("creation: arange values, sizes and dtype rule") {
  const Tensor a = rt::arange(5);
  CHECK(a.dtype() == rt::kInt64);
  CHECK(values(a) == std::vector<double>{0, 1, 2, 3, 4});
  CHECK(values(rt::arange(1, 10, 3)) == std::vector<double>{1, 4, 7});
  CHECK(values(rt::arange(10, 0, -3)) == std::vector<double>{10, 7, 4, 1});
  CHECK(values(rt::arange(-3, 3, 2)) == std::vector<double>{-3, -1, 1});
  CHECK(rt::arange(3, 3).numel() == 0);
  const Tensor f = rt::arange(0, 1, 0.1);
  CHECK(f.dtype() == rt::kFloat32);
  CHECK(f.numel() == 10);
  require_close(f, rt::from_vector(std::vector<double>{0, .1, .2, .3, .4, .5, .6, .7, .8, .9}), 1e-6, 1e-7);
  CHECK(rt::arange(2.5).dtype() == rt::kFloat32);
  CHECK(values(rt::arange(2.5)) == std::vector<double>{0, 1, 2});
  CHECK(rt::arange(0.0, 5).numel() == 5);
  CHECK(rt::arange(5, rt::TensorOptions(rt::kFloat64)).dtype() == rt::kFloat64);
  CHECK(rt::arange(0, 5, 1, rt::kFloat16).dtype() == rt::kFloat16);
  CHECK(values(rt::arange(1, 2, 0.25, rt::kFloat64)) == std::vector<double>{1, 1.25, 1.5, 1.75});
  CHECK(values(rt::arange(0, 2.5, 1, rt::kInt32)) == std::vector<double>{0, 1, 2});
  CHECK(rt::arange(1.0, -1.0, -0.5).numel() == 4);
  CHECK(values(rt::arange(-2, 2, 1, rt::kUInt8)) == std::vector<double>{254, 255, 0, 1});
  CHECK(values(rt::arange(0, 4, 1, rt::kBool)) == std::vector<double>{0, 1, 1, 1});
  CHECK_THROWS_WITH(rt::arange(0, 5, 0), Catch::Contains("arange") && Catch::Contains("nonzero"));
  CHECK_THROWS_WITH(rt::arange(5, 0), Catch::Contains("arange") && Catch::Contains("step sign"));
  CHECK_THROWS_AS(rt::arange(0, 5, -1), rt::ValueError);
  CHECK_THROWS_AS(rt::arange(0.0, std::nan("")), rt::ValueError);
}

TEST_CASE("creation: linspace and eye") {
  CHECK(values(rt::linspace(0, 1, 5)) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(values(rt::linspace(3, 7, 1)) == std::vector<double>{3});
  CHECK(rt::linspace(0, 1, 0).numel() == 0);
  CHECK(values(rt::linspace(0, 10, 4, rt::kInt64)) == std::vector<double>{0, 3, 6, 10});
  const auto l = values(rt::linspace(-1.3, 2.9, 101, rt::kFloat64));
  CHECK(l.front() == -1.3);
  CHECK(l.back() == 2.9);
  for (size_t i = 0; i < l.size(); ++i) CHECK(l[i] == Approx(-1.3 + 4.2 * double(i) / 100).margin(1e-14));
  CHECK(values(rt::linspace(1, 0, 3)) == std::vector<double>{1, 0.5, 0});
  CHECK_THROWS_WITH(rt::linspace(0, 1, -2), Catch::Contains("linspace") && Catch::Contains("-2"));

  CHECK(values(rt::eye(3)) == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  const Tensor r = rt::eye(2, 4, rt::kInt32);
  CHECK(r.sizes() == Shape{2, 4});
  CHECK(r.dtype() == rt::kInt32);
  CHECK(values(r) == std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0});
  CHECK(values(rt::eye(3, 2, rt::kBool)) == std::vector<double>{1, 0, 0, 1, 0, 0});
  CHECK(rt::eye(0).sizes() == Shape{0, 0});
  CHECK(rt::eye(2, 0).numel() == 0);
  CHECK_THROWS_WITH(rt::eye(-1), Catch::Contains("eye"));
  CHECK_THROWS_AS(rt::eye(2, -3), rt::ValueError);
  CHECK(rt::eye(2, -1, rt::TensorOptions().with_requires_grad()).requires_grad());
}
