#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "rt/parallel.h"
#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::testing::random;
using rt::testing::random_int;
using rt::testing::require_close;
using rt::testing::values;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using RowFn = std::function<double(const std::vector<double>&)>;

// float64 reference: f applied to the values of every output position (row-major order
// within the reduced dims). Empty dims = all dims.
Tensor reference(const Tensor& x, Shape dims, bool keepdim, const RowFn& f) {
  const auto v = values(x);
  const Shape& sz = x.sizes();
  const int64_t nd = x.dim();
  if (dims.empty())
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  std::vector<bool> red(size_t(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : dims) red[size_t(d < 0 ? d + nd : d)] = true;
  Shape out_shape, kept_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[size_t(d)]) kept_sizes.push_back(sz[size_t(d)]);
    if (!red[size_t(d)]) out_shape.push_back(sz[size_t(d)]);
    else if (keepdim) out_shape.push_back(1);
  }
  std::vector<std::vector<double>> rows(size_t(rt::numel_of(kept_sizes)));
  for (size_t flat = 0; flat < v.size(); ++flat) {
    int64_t rem = int64_t(flat), out = 0, mul = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      const int64_t c = rem % sz[size_t(d)];
      rem /= sz[size_t(d)];
      if (!red[size_t(d)]) {
        out += c * mul;
        mul *= sz[size_t(d)];
      }
    }
    rows[size_t(out)].push_back(v[flat]);
  }
  std::vector<double> res;
  for (auto& r : rows) res.push_back(f(r));
  return rt::from_vector(res, out_shape);
}

double ref_sum(const std::vector<double>& r) { return std::accumulate(r.begin(), r.end(), 0.0); }
double ref_mean(const std::vector<double>& r) { return ref_sum(r) / double(r.size()); }
RowFn ref_var(int64_t correction) {
  return [correction](const std::vector<double>& r) {
    const double m = ref_mean(r);
    double s = 0;
    for (double v : r) s += (v - m) * (v - m);
    return s / std::max(0.0, double(int64_t(r.size()) - correction));
  };
}
double ref_prod(const std::vector<double>& r) { return std::accumulate(r.begin(), r.end(), 1.0, std::multiplies<>()); }
double ref_max(const std::vector<double>& r) { return *std::max_element(r.begin(), r.end()); }
double ref_min(const std::vector<double>& r) { return *std::min_element(r.begin(), r.end()); }
RowFn ref_norm(double p) {
  return [p](const std::vector<double>& r) {
    if (std::isinf(p)) {
      double m = p > 0 ? 0 : kInf;
      for (double v : r) m = p > 0 ? std::max(m, std::abs(v)) : std::min(m, std::abs(v));
      return m;
    }
    double s = 0;
    for (double v : r) s += p == 0 ? (v != 0) : std::pow(std::abs(v), p);
    return p == 0 ? s : std::pow(s, 1 / p);
  };
}
double ref_lse(const std::vector<double>& r) {
  double m = -kInf;
  for (double v : r) m = std::max(m, v);
  if (std::isinf(m)) return m;
  double s = 0;
  for (double v : r) s += std::exp(v - m);
  return m + std::log(s);
}

struct DimCase {
  Shape dims;
  bool keepdim;
};
const std::vector<DimCase> kDimCases = {{{}, false}, {{}, true}, {{0}, false}, {{1}, true}, {{-1}, false}, {{0, 2}, false}, {{2, 0}, true}};

Tensor ints(const std::vector<int64_t>& v) { return rt::from_vector(v); }

std::string name_of(const rt::Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "<none>"; }

}  // namespace

TEST_CASE("reduce: floating reductions match a float64 reference over dims and keepdim") {
  const Tensor x64 = random({3, 4, 5}, rt::kFloat64, -2, 2, 1);
  const Tensor pos64 = random({3, 4, 5}, rt::kFloat64, 0.5, 1.5, 2);
  for (const auto& c : kDimCases) {
    INFO("dims " << rt::format_shape(c.dims) << " keepdim " << c.keepdim);
    for (auto dt : {rt::kFloat64, rt::kFloat32}) {
      const double tol = dt == rt::kFloat64 ? 1e-12 : 2e-6;
      const Tensor x = x64.to(dt);
      require_close(rt::mean(x, c.dims, c.keepdim), reference(x, c.dims, c.keepdim, ref_mean), tol, tol);
      require_close(rt::var(x, c.dims, 1, c.keepdim), reference(x, c.dims, c.keepdim, ref_var(1)), tol, tol);
      require_close(rt::var(x, c.dims, 0, c.keepdim), reference(x, c.dims, c.keepdim, ref_var(0)), tol, tol);
      require_close(rt::std(x, c.dims, 1, c.keepdim),
                    reference(x, c.dims, c.keepdim, [](auto& r) { return std::sqrt(ref_var(1)(r)); }), tol, tol);
      require_close(rt::amax(x, c.dims, c.keepdim), reference(x, c.dims, c.keepdim, ref_max), 0, 0);
      require_close(rt::amin(x, c.dims, c.keepdim), reference(x, c.dims, c.keepdim, ref_min), 0, 0);
      require_close(rt::logsumexp(x, c.dims, c.keepdim), reference(x, c.dims, c.keepdim, ref_lse), tol, tol);
      for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5, -1.5})
        require_close(rt::norm(x, p, c.dims, c.keepdim), reference(x, c.dims, c.keepdim, ref_norm(p)), tol, tol);
      CHECK(rt::mean(x, c.dims, c.keepdim).dtype() == dt);
    }
  }
  for (auto dt : {rt::kFloat64, rt::kFloat32}) {
    const Tensor pos = pos64.to(dt);
    const double tol = dt == rt::kFloat64 ? 1e-12 : 1e-5;
    require_close(rt::prod(pos), reference(pos, {}, false, ref_prod), tol);
    require_close(rt::prod(pos, 1), reference(pos, {1}, false, ref_prod), tol);
    require_close(rt::prod(pos, -1, true), reference(pos, {-1}, true, ref_prod), tol);
  }
}

TEST_CASE("reduce: non-contiguous inputs and 0-dim tensors") {
  const Tensor x = random({4, 6}, rt::kFloat64, -1, 1, 3).t();
  require_close(rt::mean(x, {1}), reference(x, {1}, false, ref_mean), 1e-12);
  require_close(rt::var(x, {0}), reference(x, {0}, false, ref_var(1)), 1e-12);
  const Tensor s = rt::scalar_tensor(2.5, rt::kFloat64);
  CHECK(rt::mean(s).item<double>() == 2.5);
  CHECK(rt::max(s).item<double>() == 2.5);
  CHECK(rt::argmax(s).item<int64_t>() == 0);
  CHECK(rt::logsumexp(s, {0}).item<double>() == 2.5);
  CHECK(rt::norm(s, 2, {}).item<double>() == 2.5);
  CHECK(std::isnan(rt::var(s).item<double>()));
  CHECK(rt::var(s, {}, 0).item<double>() == 0.0);
  const Tensor g = s.clone().requires_grad_();
  auto [v, i] = rt::max(g, 0);
  CHECK(v.dim() == 0);
  CHECK(i.item<int64_t>() == 0);
  v.backward();
  CHECK(g.grad().item<double>() == 1.0);
  CHECK(rt::amin(s, {}, true).dim() == 0);
}

TEST_CASE("reduce: max/min along a dim give values and first-occurrence int64 indices") {
  const Tensor x = random_int({5, 7}, 0, 3, 4);  // many ties
  for (int64_t dim : {0, 1, -1}) {
    auto [v, i] = rt::max(x, dim);
    auto [vn, in] = rt::min(x, dim, true);
    CHECK(v.dtype() == rt::kInt64);
    CHECK(i.dtype() == rt::kInt64);
    CHECK(vn.dim() == 2);
    require_close(v, reference(x, {dim}, false, ref_max), 0, 0);
    require_close(vn, reference(x, {dim}, true, ref_min), 0, 0);
    auto first = [](const std::vector<double>& r, bool mx) {
      return double((mx ? std::max_element(r.begin(), r.end()) : std::min_element(r.begin(), r.end())) - r.begin());
    };
    require_close(i, reference(x, {dim}, false, [&](auto& r) { return first(r, true); }), 0, 0);
    require_close(in, reference(x, {dim}, true, [&](auto& r) { return first(r, false); }), 0, 0);
    require_close(rt::argmax(x, dim), i, 0, 0);
    require_close(rt::argmin(x, dim, true), in, 0, 0);
  }
  const Tensor t = rt::tensor({3.f, 1.f, 3.f, 1.f}, {4});
  CHECK(rt::argmax(t).item<int64_t>() == 0);
  CHECK(rt::argmin(t).item<int64_t>() == 1);
  const Tensor m = rt::tensor({1., 9., 2., 9., 0., 0.}, {2, 3});
  CHECK(rt::argmax(m).item<int64_t>() == 1);  // flat index
  CHECK(rt::argmax(m, std::nullopt, true).sizes() == Shape{1, 1});
  CHECK(rt::argmin(m).item<int64_t>() == 4);
}

TEST_CASE("reduce: NaN propagates through max, min, amax, argmax and logsumexp") {
  const Tensor x = rt::tensor({1.0, kNaN, 5.0, kNaN, -1.0}, {5});
  CHECK(std::isnan(rt::max(x).item<double>()));
  CHECK(std::isnan(rt::min(x).item<double>()));
  CHECK(std::isnan(rt::amax(x).item<double>()));
  CHECK(std::isnan(rt::norm(x, kInf).item<double>()));
  CHECK(std::isnan(rt::logsumexp(x, {0}).item<double>()));
  CHECK(rt::argmax(x).item<int64_t>() == 1);
  CHECK(rt::argmin(x).item<int64_t>() == 1);
  auto [v, i] = rt::max(x.to(rt::kFloat32), 0);
  CHECK(std::isnan(v.item<double>()));
  CHECK(i.item<int64_t>() == 1);
}

TEST_CASE("reduce: logsumexp is stable and handles infinite rows") {
  const Tensor big = rt::tensor({1000.f, 1000.f, 990.f}, {3});
  CHECK(rt::logsumexp(big, {0}).item<double>() == Approx(1000 + std::log(2 + std::exp(-10.0))).epsilon(1e-6));
  const Tensor rows = rt::tensor({-kInf, -kInf, 1.0, -kInf, kInf, 2.0, -1e308, -1e308}, {4, 2});
  const auto r = values(rt::logsumexp(rows, {1}));
  CHECK(r[0] == -kInf);
  CHECK(r[1] == Approx(1.0));
  CHECK(r[2] == kInf);
  CHECK(r[3] == Approx(-1e308 + std::log(2.0)));
  CHECK(rt::logsumexp(rt::zeros({0, 3}), {0}).sizes() == Shape{3});
  CHECK(values(rt::logsumexp(rt::zeros({0, 3}), {0}))[0] == -kInf);
}

TEST_CASE("reduce: dtype rules for integer and bool inputs") {
  const Tensor i32 = ints({2, 3, 4}).to(rt::kInt32);
  CHECK(rt::prod(i32).dtype() == rt::kInt64);
  CHECK(rt::prod(i32).item<int64_t>() == 24);
  CHECK(rt::prod(ints({1, 0}).to(rt::kBool)).dtype() == rt::kInt64);
  CHECK(rt::amax(i32).dtype() == rt::kInt32);
  CHECK(rt::max(i32).item<int64_t>() == 4);
  CHECK(rt::argmin(i32).item<int64_t>() == 0);
  const int64_t big = int64_t(1) << 40;
  CHECK(rt::prod(rt::tensor({big, int64_t(3)}, {2})).item<int64_t>() == 3 * big);
  for (auto* op : {"mean", "var", "std", "norm", "logsumexp"}) {
    INFO(op);
    const Tensor l = ints({1, 2, 3});
    try {
      if (std::string(op) == "mean") rt::mean(l);
      if (std::string(op) == "var") rt::var(l);
      if (std::string(op) == "std") rt::std(l);
      if (std::string(op) == "norm") rt::norm(l);
      if (std::string(op) == "logsumexp") rt::logsumexp(l, {0});
      FAIL("no DTypeError");
    } catch (const rt::DTypeError& e) {
      const std::string msg = e.what();
      CHECK(msg.find(op) != std::string::npos);
      CHECK(msg.find("int64") != std::string::npos);
      CHECK(msg.find("Hint") != std::string::npos);
    }
  }
}

TEST_CASE("reduce: half types compute in float32") {
  const Tensor x = random({8, 300}, rt::kFloat64, 0, 1, 5);
  for (auto dt : {rt::kFloat16, rt::kBFloat16}) {
    const Tensor h = x.to(dt);
    const Tensor hx = h.to(rt::kFloat64);
    const double tol = dt == rt::kFloat16 ? 2e-3 : 1e-2;
    CHECK(rt::mean(h, {1}).dtype() == dt);
    require_close(rt::mean(h, {1}), reference(hx, {1}, false, ref_mean), tol, 0);
    require_close(rt::std(h, {1}), reference(hx, {1}, false, [](auto& r) { return std::sqrt(ref_var(1)(r)); }), tol, 0);
    require_close(rt::logsumexp(h, {1}), reference(hx, {1}, false, ref_lse), tol, 0);
    require_close(rt::norm(h, 2, {1}), reference(hx, {1}, false, ref_norm(2)), tol, 0);
    require_close(rt::amax(h, {1}), reference(hx, {1}, false, ref_max), 0, 0);
  }
}

TEST_CASE("reduce: empty reductions behave like PyTorch") {
  const Tensor e = rt::zeros({0, 3});
  CHECK(rt::sum(e).item<float>() == 0.f);
  CHECK(std::isnan(rt::mean(e).item<float>()));
  CHECK(rt::prod(e).item<float>() == 1.f);
  CHECK(rt::norm(e).item<float>() == 0.f);
  CHECK(rt::all(e).item<bool>());
  CHECK_FALSE(rt::any(e).item<bool>());
  CHECK(rt::amax(e, {1}).sizes() == Shape{0});
  CHECK(rt::max(e, 1).first.sizes() == Shape{0});
  auto throws_naming = [](const std::function<void()>& f, const std::string& op) {
    try {
      f();
      FAIL("expected a ShapeError from " << op);
    } catch (const rt::ShapeError& err) {
      const std::string msg = err.what();
      CHECK(msg.find(op) == 0);
      CHECK(msg.find("[0, 3]") != std::string::npos);
      CHECK(msg.find("dimension 0") != std::string::npos);
    }
  };
  throws_naming([&] { rt::max(e); }, "max");
  throws_naming([&] { rt::min(e); }, "min");
  throws_naming([&] { rt::max(e, 0); }, "max");
  throws_naming([&] { rt::argmax(e); }, "argmax");
  throws_naming([&] { rt::argmin(e, 0); }, "argmin");
  throws_naming([&] { rt::amin(e, {0, 1}); }, "amin");
  throws_naming([&] { rt::norm(e, kInf); }, "norm");
}

TEST_CASE("reduce: all and any return bool, NaN counts as true") {
  const Tensor x = rt::tensor({1., 0., kNaN, 2., 3., 4.}, {2, 3});
  CHECK(rt::all(x).dtype() == rt::kBool);
  CHECK_FALSE(rt::all(x).item<bool>());
  CHECK(rt::any(x).item<bool>());
  CHECK(values(rt::all(x, 1)) == std::vector<double>{0, 1});
  CHECK(values(rt::all(x, 0, true)) == std::vector<double>{1, 0, 1});
  CHECK(rt::all(x, 0, true).sizes() == Shape{1, 3});
  CHECK(values(rt::any(rt::zeros({2, 2}, rt::kInt32), 1)) == std::vector<double>{0, 0});
  CHECK(rt::all(rt::tensor({kNaN}, {1})).item<bool>());
  CHECK(rt::all(rt::ones({3}, rt::kBool)).item<bool>());
}

TEST_CASE("reduce: float32 sums keep error small on long rows") {
  const int64_t n = int64_t(1) << 22;
  const Tensor x = rt::full({n}, 0.1, rt::kFloat32);
  const double exact = double(0.1f);
  CHECK(std::abs(rt::mean(x).item<double>() - exact) < 1e-7);
  CHECK(std::abs(rt::mean(x.view({4, n / 4}), {1}).to_vector<double>()[3] - exact) < 1e-7);
  CHECK(std::abs(rt::var(x).item<double>()) < 1e-12);
  CHECK(std::abs(rt::norm(x).item<double>() - exact * std::sqrt(double(n))) < 1e-6 * exact * std::sqrt(double(n)));
  CHECK(std::abs(rt::logsumexp(x, {0}).item<double>() - (exact + std::log(double(n)))) < 1e-5);
}

TEST_CASE("reduce: ties and NaN across the chunks of a long row") {
  std::vector<double> v(100000, 0.0);
  v[70000] = v[90000] = 5;
  v[20000] = v[99999] = -5;
  Tensor x = rt::from_vector(v);
  CHECK(rt::argmax(x).item<int64_t>() == 70000);
  CHECK(rt::argmin(x).item<int64_t>() == 20000);
  CHECK(rt::max(x.view({1, 100000}), 1).second.item<int64_t>() == 70000);
  v[80000] = v[95000] = kNaN;
  x = rt::from_vector(v);
  CHECK(rt::argmax(x).item<int64_t>() == 80000);
  CHECK(rt::argmin(x.to(rt::kFloat32)).item<int64_t>() == 80000);
  CHECK(std::isnan(rt::amin(x).item<double>()));
  CHECK(std::isnan(rt::logsumexp(x, {0}).item<double>()));
  const Tensor g = x.clone().requires_grad_();
  rt::amax(g).backward();
  const auto gv = values(g.grad());
  CHECK(gv[80000] == 0.5);
  CHECK(gv[95000] == 0.5);
  CHECK(gv[70000] == 0.0);
}

TEST_CASE("reduce: results do not depend on the thread count") {
  const Tensor wide = random({2, 300000}, rt::kFloat32, -1, 1, 6);
  const Tensor tall = random({3000, 40}, rt::kFloat32, -1, 1, 7);
  auto run = [&] {
    std::vector<Tensor> r;
    for (const Tensor& x : {wide, tall}) {
      r.push_back(rt::mean(x, {1}));
      r.push_back(rt::mean(x));
      r.push_back(rt::var(x, {1}));
      r.push_back(rt::norm(x, 3, {1}));
      r.push_back(rt::logsumexp(x, {1}));
      r.push_back(rt::prod(x, 0));
      r.push_back(rt::max(x, 1).second);
      r.push_back(rt::argmin(x));
      r.push_back(rt::amax(x, {0}));
    }
    return r;
  };
  rt::set_num_threads(1);
  const auto one = run();
  rt::set_num_threads(4);
  const auto four = run();
  rt::set_num_threads(3);
  const auto three = run();
  rt::set_num_threads(0);
  for (size_t k = 0; k < one.size(); ++k) {
    INFO("result " << k);
    CHECK(values(one[k]) == values(four[k]));
    CHECK(values(one[k]) == values(three[k]));
  }
}

TEST_CASE("reduce: gradients split among ties and flow to the selected index") {
  const Tensor x = rt::tensor({1., 3., 3., 0.}, {4}).requires_grad_();
  rt::max(x).backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 0.5, 0.5, 0});
  const Tensor y = rt::tensor({1., 3., 3., 0.}, {2, 2}).requires_grad_();
  rt::amax(y, {}).backward();
  CHECK(values(y.grad()) == std::vector<double>{0, 0.5, 0.5, 0});
  const Tensor z = rt::tensor({3., 3., 1., 1.}, {2, 2}).requires_grad_();
  rt::max(z, 1).first.sum().backward();
  CHECK(values(z.grad()) == std::vector<double>{1, 0, 1, 0});
  const Tensor w = rt::tensor({2., 0., 3., 0.}, {4}).requires_grad_();
  rt::prod(w).backward();
  CHECK(values(w.grad()) == std::vector<double>{0, 0, 0, 0});
  const Tensor u = rt::tensor({2., 0., 3., 4.}, {4}).requires_grad_();
  rt::prod(u).backward();
  CHECK(values(u.grad()) == std::vector<double>{0, 24, 0, 0});
  const Tensor s = rt::tensor({1.f, 1.f, 1.f}, {3}).requires_grad_();
  rt::std(s).backward();
  CHECK(values(s.grad()) == std::vector<double>{0, 0, 0});
  const Tensor n0 = rt::zeros({3}, rt::kFloat64).requires_grad_();
  rt::norm(n0).backward();
  CHECK(values(n0.grad()) == std::vector<double>{0, 0, 0});
}

TEST_CASE("reduce: backward node names follow PyTorch") {
  const Tensor x = random({3, 4}, rt::kFloat64, 0.5, 1, 8).requires_grad_();
  CHECK(name_of(rt::mean(x)) == "MeanBackward0");
  CHECK(name_of(rt::mean(x, {1})) == "MeanBackward1");
  CHECK(name_of(rt::prod(x)) == "ProdBackward0");
  CHECK(name_of(rt::prod(x, 0)) == "ProdBackward1");
  CHECK(name_of(rt::max(x)) == "MaxBackward1");
  CHECK(name_of(rt::max(x, 0).first) == "MaxBackward0");
  CHECK(name_of(rt::min(x)) == "MinBackward1");
  CHECK(name_of(rt::min(x, 0).first) == "MinBackward0");
  CHECK(name_of(rt::amax(x, {1})) == "AmaxBackward0");
  CHECK(name_of(rt::amin(x, {1})) == "AminBackward0");
  CHECK(name_of(rt::var(x)) == "VarBackward0");
  CHECK(name_of(rt::std(x)) == "StdBackward0");
  CHECK(name_of(rt::norm(x)) == "LinalgVectorNormBackward0");
  CHECK(name_of(rt::logsumexp(x, {1})) == "LogsumexpBackward0");
  CHECK_FALSE(rt::max(x, 0).second.requires_grad());
  CHECK_FALSE(rt::argmax(x).requires_grad());
  CHECK_FALSE(rt::all(x).requires_grad());
}

TEST_CASE("reduce: bad dims name the op") {
  const Tensor x = rt::zeros({2, 3});
  CHECK_THROWS_WITH(rt::amax(x, {2}), Catch::Contains("amax") && Catch::Contains("out of range"));
  CHECK_THROWS_AS(rt::mean(x, {0, -2}), rt::IndexError);
  CHECK_THROWS_WITH(rt::mean(x, {0, -2}), Catch::Contains("mean") && Catch::Contains("multiple times"));
  CHECK_THROWS_AS(rt::max(x, 5), rt::IndexError);
  CHECK_THROWS_AS(rt::argmin(x, -3), rt::IndexError);
  CHECK_THROWS_AS(rt::all(x, 2), rt::IndexError);
  CHECK_THROWS_AS(rt::norm(x, kNaN), rt::ValueError);
}

TEST_CASE("reduce: gradcheck") {
  using rt::TensorList;
  const Tensor mask = rt::tensor({1., 1., 0., 1., 1., 1.}, {2, 3});
  rt::testing::run_grad_cases({
      {"mean_all", {{3, 4}}, [](const TensorList& x) { return rt::mean(x[0]); }},
      {"mean_dims", {{2, 3, 4}}, [](const TensorList& x) { return rt::mean(x[0], {0, 2}, true); }},
      {"prod_all", {{2, 3}}, [](const TensorList& x) { return rt::prod(x[0]); }},
      {"prod_dim", {{3, 4}}, [](const TensorList& x) { return rt::prod(x[0], 1); }},
      {"prod_with_zero", {{2, 3}}, [mask](const TensorList& x) { return rt::prod(x[0] * mask, 1); }},
      {"max_all", {{3, 4}}, [](const TensorList& x) { return rt::max(x[0]); }},
      {"min_all", {{3, 4}}, [](const TensorList& x) { return rt::min(x[0]); }},
      {"max_dim", {{3, 4}}, [](const TensorList& x) { return rt::max(x[0], 1).first; }},
      {"min_dim_keep", {{3, 4}}, [](const TensorList& x) { return rt::min(x[0], 0, true).first; }},
      {"amax", {{2, 3, 4}}, [](const TensorList& x) { return rt::amax(x[0], {0, 2}); }},
      {"amin", {{2, 3, 4}}, [](const TensorList& x) { return rt::amin(x[0], {1}, true); }},
      {"var", {{3, 4}}, [](const TensorList& x) { return rt::var(x[0]); }},
      {"var_dim_c0", {{3, 4}}, [](const TensorList& x) { return rt::var(x[0], {1}, 0); }},
      {"std", {{3, 4}}, [](const TensorList& x) { return rt::std(x[0], {0}); }},
      {"std_keep_c2", {{2, 5}}, [](const TensorList& x) { return rt::std(x[0], {1}, 2, true); }},
      {"norm2", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0]); }},
      {"norm2_dim", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 2, {1}); }},
      {"norm1", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 1, {0}); }},
      {"norm_inf", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], kInf, {1}); }},
      {"norm_neg_inf", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], -kInf, {1}); }},
      {"norm3", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 3, {1}, true); }},
      {"norm1.5", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 1.5); }, 0.2, 1.0},
      {"norm0.5", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 0.5, {0}); }, 0.2, 1.0},
      {"norm_neg2", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], -2.0, {1}); }, 0.2, 1.0},
      {"norm0", {{3, 4}}, [](const TensorList& x) { return rt::norm(x[0], 0, {1}); }},
      {"logsumexp", {{3, 4}}, [](const TensorList& x) { return rt::logsumexp(x[0], {1}); }, -3, 3},
      {"logsumexp_all", {{2, 3, 2}}, [](const TensorList& x) { return rt::logsumexp(x[0], {}, true); }, -3, 3},
  });
}
