// Pointwise ops: forward against float64 references, dtype rules, edge values, errors,
// in-place forms, and finite-difference gradients.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "cpu/loops.h"  // kParallelGrain
#include "rt/parallel.h"
#include "testing.h"

using rt::Tensor;
using rt::TensorList;
namespace rtt = rt::testing;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double softplus_ref(double x, double beta, double threshold) {
  return beta * x > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  double lo, hi;
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"abs", [](const Tensor& x) { return rt::abs(x); }, [](double x) { return std::fabs(x); }, -3, 3},
      {"sign", [](const Tensor& x) { return rt::sign(x); }, [](double x) { return double((x > 0) - (x < 0)); }, -3, 3},
      {"exp", [](const Tensor& x) { return rt::exp(x); }, [](double x) { return std::exp(x); }, -20, 20},
      {"log", [](const Tensor& x) { return rt::log(x); }, [](double x) { return std::log(x); }, 1e-3, 50},
      {"log1p", [](const Tensor& x) { return rt::log1p(x); }, [](double x) { return std::log1p(x); }, -0.9, 5},
      {"sqrt", [](const Tensor& x) { return rt::sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 100},
      {"rsqrt", [](const Tensor& x) { return rt::rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); }, 1e-2, 100},
      {"square", [](const Tensor& x) { return rt::square(x); }, [](double x) { return x * x; }, -5, 5},
      {"reciprocal", [](const Tensor& x) { return rt::reciprocal(x); }, [](double x) { return 1 / x; }, 0.1, 10},
      {"sin", [](const Tensor& x) { return rt::sin(x); }, [](double x) { return std::sin(x); }, -6, 6},
      {"cos", [](const Tensor& x) { return rt::cos(x); }, [](double x) { return std::cos(x); }, -6, 6},
      {"tanh", [](const Tensor& x) { return rt::tanh(x); }, [](double x) { return std::tanh(x); }, -6, 6},
      {"sigmoid", [](const Tensor& x) { return rt::sigmoid(x); }, sigmoid_ref, -20, 20},
      {"relu", [](const Tensor& x) { return rt::relu(x); }, [](double x) { return x > 0 ? x : 0; }, -3, 3},
      {"leaky_relu", [](const Tensor& x) { return rt::leaky_relu(x, 0.2); }, [](double x) { return x > 0 ? x : 0.2 * x; }, -3, 3},
      {"gelu", [](const Tensor& x) { return rt::gelu(x); }, gelu_ref, -6, 6},
      {"gelu_tanh", [](const Tensor& x) { return rt::gelu(x, "tanh"); }, gelu_tanh_ref, -6, 6},
      {"silu", [](const Tensor& x) { return rt::silu(x); }, [](double x) { return x * sigmoid_ref(x); }, -20, 20},
      {"softplus", [](const Tensor& x) { return rt::softplus(x); }, [](double x) { return softplus_ref(x, 1, 20); }, -30, 30},
      {"softplus_beta", [](const Tensor& x) { return rt::softplus(x, 2.0, 5.0); }, [](double x) { return softplus_ref(x, 2, 5); }, -5, 5},
      {"pow_2.5", [](const Tensor& x) { return rt::pow(x, 2.5); }, [](double x) { return std::pow(x, 2.5); }, 0, 4},
      {"pow_3", [](const Tensor& x) { return rt::pow(x, 3); }, [](double x) { return x * x * x; }, -4, 4},
      {"pow_-0.5", [](const Tensor& x) { return rt::pow(x, -0.5); }, [](double x) { return 1 / std::sqrt(x); }, 0.1, 4},
      {"pow_-2", [](const Tensor& x) { return rt::pow(x, -2); }, [](double x) { return 1 / (x * x); }, 0.1, 4},
      {"rpow", [](const Tensor& x) { return rt::pow(1.5, x); }, [](double x) { return std::pow(1.5, x); }, -10, 10},
      {"clamp", [](const Tensor& x) { return rt::clamp(x, -0.5, 0.75); }, [](double x) { return std::min(std::max(x, -0.5), 0.75); }, -1, 1},
      {"clamp_min", [](const Tensor& x) { return x.clamp_min(0.25); }, [](double x) { return std::max(x, 0.25); }, -1, 1},
      {"clamp_max", [](const Tensor& x) { return x.clamp_max(0.25); }, [](double x) { return std::min(x, 0.25); }, -1, 1},
  };
}

Tensor ints(const std::vector<int64_t>& v) { return rt::from_vector(v); }

template <typename E>
void check_throws_mentioning(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL("expected an exception");
  } catch (const E& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    for (const auto& p : parts) CHECK(msg.find(p) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("unary ops match float64 references in float64, float32 and float16") {
  uint64_t seed = 1;
  for (const auto& c : unary_cases()) {
    INFO("op " << c.name);
    Tensor x = rtt::random({4, 7, 9}, rt::kFloat64, c.lo, c.hi, seed++);
    Tensor expected = rtt::map_reference(x, c.ref);
    Tensor y = c.op(x);
    CHECK(y.dtype() == rt::kFloat64);
    rtt::require_close(y, expected, 1e-12, 1e-14);

    // float32, with a length that crosses the parallel grain and leaves a vector remainder.
    Tensor x32 = rtt::random({2 * rt::cpu::kParallelGrain + 13}, rt::kFloat32, c.lo, c.hi, seed++);
    Tensor y32 = c.op(x32);
    CHECK(y32.dtype() == rt::kFloat32);
    rtt::require_close(y32, rtt::map_reference(x32, c.ref), 2e-6, 2e-6);

    // Non-contiguous input: a transposed view.
    Tensor xt = rtt::random({9, 13}, rt::kFloat32, c.lo, c.hi, seed++).t();
    REQUIRE_FALSE(xt.is_contiguous());
    rtt::require_close(c.op(xt), rtt::map_reference(xt, c.ref), 2e-6, 2e-6);

    Tensor x16 = rtt::random({33}, rt::kFloat16, std::max(c.lo, -10.0), std::min(c.hi, 10.0), seed++);
    Tensor y16 = c.op(x16);
    CHECK(y16.dtype() == rt::kFloat16);
    rtt::require_close(y16, rtt::map_reference(x16, c.ref), 2e-3, 2e-3);
  }
}

TEST_CASE("float32 exp, log, tanh, sigmoid and gelu stay within a few ulp over the whole range") {
  Tensor x = rt::linspace(-110, 110, 440001, rt::kFloat32);
  // References rounded to float32, so that values past FLT_MAX become inf.
  rtt::require_close(rt::exp(x), rtt::map_reference(x, [](double v) { return std::exp(v); }).to(rt::kFloat32), 3e-7, 1e-44);
  rtt::require_close(rt::tanh(x), rtt::map_reference(x, [](double v) { return std::tanh(v); }), 4e-7, 0);
  rtt::require_close(rt::sigmoid(x), rtt::map_reference(x, sigmoid_ref), 4e-7, 1e-44);
  Tensor pos = rt::exp(rt::linspace(-103, 88, 200001, rt::kFloat32));
  rtt::require_close(rt::log(pos), rtt::map_reference(pos, [](double v) { return std::log(v); }), 2.5e-7, 1e-12);
  Tensor small = rt::linspace(-1, 1, 20001, rt::kFloat32);
  rtt::require_close(rt::tanh(small), rtt::map_reference(small, [](double v) { return std::tanh(v); }), 4e-7, 0);
  rtt::require_close(rt::exp(small), rtt::map_reference(small, [](double v) { return std::exp(v); }), 3e-7, 0);
  Tensor wide = rt::linspace(-12, 12, 240001, rt::kFloat32);
  rtt::require_close(rt::gelu(wide), rtt::map_reference(wide, gelu_ref), 1e-6, 1e-6);
}

TEST_CASE("unary ops at special values: infinities, NaN, zeros and tiny numbers") {
  const std::vector<double> v = {-kInf, -1e4, -104, -103, -88, -87.5, -1e-30, -0.0, 0.0, 1e-30, 88, 88.7, 89, 1e4, kInf, kNaN};
  for (auto dt : {rt::kFloat32, rt::kFloat64}) {
    Tensor x = rt::from_vector(v).to(dt);
    INFO("dtype " << rt::dtype_name(dt));
    const double atol = dt == rt::kFloat32 ? 1e-44 : 0;
    rtt::require_close(rt::exp(x), rtt::map_reference(x, [](double a) { return std::exp(a); }).to(dt), 3e-7, atol);
    rtt::require_close(rt::tanh(x), rtt::map_reference(x, [](double a) { return std::tanh(a); }), 3e-7, 0);
    rtt::require_close(rt::sigmoid(x), rtt::map_reference(x, sigmoid_ref), 3e-7, atol);
    rtt::require_close(rt::relu(x), rtt::map_reference(x, [](double a) { return a < 0 ? 0 : a; }));
    rtt::require_close(rt::log(x), rtt::map_reference(x, [](double a) { return std::log(a); }), 3e-7, 0);
    rtt::require_close(rt::gelu(x), rtt::map_reference(x, gelu_ref), 3e-7, atol);
    rtt::require_close(rt::softplus(x), rtt::map_reference(x, [](double a) { return softplus_ref(a, 1, 20); }), 3e-7, atol);
    rtt::require_close(rt::gelu(x, "tanh"), rtt::map_reference(x, gelu_tanh_ref), 3e-7, atol);
  }
  // tanh keeps the sign of zero and full relative precision near zero.
  Tensor z = rt::tanh(rt::tensor({-0.0f, 1e-30f}));
  CHECK(std::signbit(z.to_vector<float>()[0]));
  CHECK(z.to_vector<float>()[1] == 1e-30f);
  CHECK(rt::exp(rt::tensor({0.0f})).item<float>() == 1.0f);
}

TEST_CASE("dtype rules follow PyTorch") {
  Tensor i64 = ints({-2, 0, 3});
  Tensor i32 = i64.to(rt::kInt32);
  Tensor b = ints({1, 0, 1}).to(rt::kBool);
  SECTION("floating functions promote integers and bools to float32") {
    for (auto& t : {i64, i32, b}) {
      CHECK(rt::exp(t).dtype() == rt::kFloat32);
      CHECK(rt::sqrt(t).dtype() == rt::kFloat32);
      CHECK(rt::sigmoid(t).dtype() == rt::kFloat32);
      CHECK(rt::tanh(t).dtype() == rt::kFloat32);
      CHECK(rt::gelu(t).dtype() == rt::kFloat32);
      CHECK(rt::reciprocal(t).dtype() == rt::kFloat32);
    }
    rtt::require_close(rt::exp(i64), rt::tensor({std::exp(-2.f), 1.f, std::exp(3.f)}));
    rtt::require_close(rt::reciprocal(i32), rt::tensor({-0.5f, INFINITY, 1.f / 3}));
    rtt::require_close(rt::sigmoid(b), rt::tensor({float(sigmoid_ref(1)), 0.5f, float(sigmoid_ref(1))}));
  }
  SECTION("relu, abs, sign, square and clamp keep integer dtypes") {
    CHECK(rt::relu(i64).dtype() == rt::kInt64);
    CHECK(rt::relu(i64).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 3});
    CHECK(rt::abs(i32).dtype() == rt::kInt32);
    CHECK(rt::abs(i32).to_vector<int32_t>() == std::vector<int32_t>{2, 0, 3});
    CHECK(rt::sign(i64).to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 1});
    CHECK(rt::sign(b).dtype() == rt::kBool);
    CHECK(rt::square(i32).dtype() == rt::kInt32);
    CHECK(rt::square(i32).to_vector<int32_t>() == std::vector<int32_t>{4, 0, 9});
    CHECK(rt::square(b).dtype() == rt::kInt64);
    CHECK(rt::clamp(i64, -1, 2).dtype() == rt::kInt64);
    CHECK(rt::clamp(i64, -1, 2).to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 2});
    // Integer overflow wraps as in PyTorch (and without undefined behaviour).
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    CHECK(rt::abs(ints({lowest})).to_vector<int64_t>() == std::vector<int64_t>{lowest});
    CHECK(rt::pow(ints({2, 3}).to(rt::kInt32), 32).to_vector<int64_t>() == std::vector<int64_t>{0, 3793632897 - (int64_t(1) << 32)});
    CHECK(rt::square(ints({65536}).to(rt::kInt32)).to_vector<int64_t>() == std::vector<int64_t>{0});
    Tensor u8 = ints({0, 200, 255}).to(rt::kUInt8);
    CHECK(rt::abs(u8).to_vector<int64_t>() == std::vector<int64_t>{0, 200, 255});
    CHECK(rt::relu(u8).dtype() == rt::kUInt8);
  }
  SECTION("a float bound promotes an integer clamp to float32") {
    Tensor c = rt::clamp(i64, 0.5);
    CHECK(c.dtype() == rt::kFloat32);
    CHECK(c.to_vector<float>() == std::vector<float>{0.5f, 0.5f, 3.f});
  }
  SECTION("pow") {
    CHECK(rt::pow(i64, 2).dtype() == rt::kInt64);
    CHECK(rt::pow(i64, 3).to_vector<int64_t>() == std::vector<int64_t>{-8, 0, 27});
    CHECK(rt::pow(i64, 0.5).dtype() == rt::kFloat32);
    CHECK(rt::pow(2, i64.clamp_min(0)).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 8});
    CHECK(rt::pow(2.0, i64).dtype() == rt::kFloat32);
    CHECK(rt::pow(i64, i64.clamp_min(0)).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 27});
    // Integer tensors to negative integer tensor powers: 0 unless the base is 1 or -1.
    Tensor base = ints({1, -1, -1, 2, 0}), ex = ints({-3, -3, -2, -1, 2});
    CHECK(rt::pow(base, ex).to_vector<int64_t>() == std::vector<int64_t>{1, -1, 1, 0, 0});
    CHECK(rt::pow(rt::tensor({1.5f}), rt::scalar_tensor(2.0, rt::kFloat64)).dtype() == rt::kFloat32);
    Tensor h = rt::pow(rt::tensor({3.f}).to(rt::kFloat16), 2.5);
    CHECK(h.dtype() == rt::kFloat16);
    CHECK(h.item<float>() == Approx(std::pow(3.0, 2.5)).epsilon(1e-3));
  }
  SECTION("maximum, minimum and comparisons promote their operands") {
    Tensor f = rt::tensor({-1.5f, 0.5f, 2.5f});
    CHECK(rt::maximum(i64, f).dtype() == rt::kFloat32);
    CHECK(rt::maximum(i64, f).to_vector<float>() == std::vector<float>{-1.5f, 0.5f, 3.f});
    CHECK(rt::minimum(i32, i64).dtype() == rt::kInt64);
    CHECK(rt::maximum(b, b.logical_not()).to_vector<bool>() == std::vector<bool>{true, true, true});
    // int64 tensor vs float scalar compares as float, not by truncating the scalar.
    CHECK(i64.lt(rt::scalar_to_tensor(0.5)).to_vector<bool>() == std::vector<bool>{true, true, false});
    CHECK(i64.eq(rt::scalar_to_tensor(0.0)).to_vector<bool>() == std::vector<bool>{false, true, false});
    CHECK(rt::where(b, i64, f).dtype() == rt::kFloat32);
  }
}

TEST_CASE("pow special exponents and clamp edge cases") {
  Tensor x = rtt::random({200}, rt::kFloat32, 0.1, 4, 7);
  for (double e : {0.0, 1.0, 2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.7, -3.3}) {
    INFO("exponent " << e);
    rtt::require_close(rt::pow(x, e), rtt::map_reference(x, [e](double v) { return std::pow(v, e); }), 2e-6);
  }
  Tensor neg = rt::tensor({-8.f, -0.f, 0.f});
  CHECK(std::isnan(rt::pow(neg, 1.0 / 3).to_vector<float>()[0]));
  CHECK(rt::pow(neg, 0).to_vector<float>() == std::vector<float>{1.f, 1.f, 1.f});
  Tensor e = rtt::random({5, 1}, rt::kFloat64, -2, 2, 8), base = rtt::random({4}, rt::kFloat64, 0.1, 3, 9);
  Tensor p = rt::pow(base, e);
  REQUIRE(p.sizes() == rt::Shape{5, 4});
  auto pv = rtt::values(p), bv = rtt::values(base), ev = rtt::values(e);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) CHECK(pv[size_t(i * 4 + j)] == Approx(std::pow(bv[size_t(j)], ev[size_t(i)])).epsilon(1e-12));

  Tensor c = rt::tensor({-2.f, NAN, 0.3f, 5.f});
  auto cv = rt::clamp(c, 0, 1).to_vector<float>();
  CHECK(cv[0] == 0.f);
  CHECK(std::isnan(cv[1]));
  CHECK(cv[2] == 0.3f);
  CHECK(cv[3] == 1.f);
  // min > max: everything becomes max, as in PyTorch.
  CHECK(rt::clamp(c.slice(0, 2, 4), 2, 1).to_vector<float>() == std::vector<float>{1.f, 1.f});
  CHECK(std::isnan(rt::clamp(c, NAN, 1.0).to_vector<float>()[0]));
}

TEST_CASE("maximum and minimum broadcast and propagate NaN") {
  Tensor a = rtt::random({3, 1, 5}, rt::kFloat64, -1, 1, 11), b = rtt::random({4, 1}, rt::kFloat64, -1, 1, 12);
  Tensor mx = rt::maximum(a, b), mn = rt::minimum(a, b);
  REQUIRE(mx.sizes() == rt::Shape{3, 4, 5});
  auto av = rtt::values(a), bv = rtt::values(b), xv = rtt::values(mx), nv = rtt::values(mn);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) {
        const size_t o = size_t((i * 4 + j) * 5 + k);
        CHECK(xv[o] == std::max(av[size_t(i * 5 + k)], bv[size_t(j)]));
        CHECK(nv[o] == std::min(av[size_t(i * 5 + k)], bv[size_t(j)]));
      }
  Tensor n = rt::tensor({NAN, 1.f, 2.f}), m = rt::tensor({0.f, NAN, 1.f});
  auto v = rt::maximum(n, m).to_vector<float>();
  CHECK((std::isnan(v[0]) && std::isnan(v[1]) && v[2] == 2.f));
  v = rt::minimum(n, m).to_vector<float>();
  CHECK((std::isnan(v[0]) && std::isnan(v[1]) && v[2] == 1.f));
}

TEST_CASE("comparisons, logical ops, isnan and isinf") {
  Tensor a = rtt::random_int({6, 5}, -3, 3, 21).to(rt::kFloat32), b = rtt::random_int({5}, -3, 3, 22).to(rt::kFloat32);
  auto av = rtt::values(a), bv = rtt::values(b);
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&, const Tensor&);
    bool (*ref)(double, double);
  };
  const Case cases[] = {
      {"eq", rt::eq, [](double x, double y) { return x == y; }}, {"ne", rt::ne, [](double x, double y) { return x != y; }},
      {"lt", rt::lt, [](double x, double y) { return x < y; }},  {"le", rt::le, [](double x, double y) { return x <= y; }},
      {"gt", rt::gt, [](double x, double y) { return x > y; }},  {"ge", rt::ge, [](double x, double y) { return x >= y; }},
  };
  for (const auto& c : cases) {
    INFO("op " << c.name);
    for (bool transposed : {false, true}) {
      Tensor lhs = transposed ? a.t().contiguous().t() : a;
      Tensor r = c.op(lhs, b);
      REQUIRE(r.dtype() == rt::kBool);
      REQUIRE(r.sizes() == rt::Shape{6, 5});
      auto rv = r.to_vector<bool>();
      for (size_t i = 0; i < rv.size(); ++i) CHECK(rv[i] == c.ref(av[i], bv[i % 5]));
    }
    CHECK_FALSE(c.op(a, b).requires_grad());
  }
  Tensor n = rt::tensor({NAN, 1.f});
  CHECK(rt::eq(n, n).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK(rt::ne(n, n).to_vector<bool>() == std::vector<bool>{true, false});

  Tensor x = ints({0, 2, -1, 0}), y = rt::tensor({0.f, 0.f, 3.f, 0.5f});
  CHECK(rt::logical_not(x).to_vector<bool>() == std::vector<bool>{true, false, false, true});
  CHECK(rt::logical_and(x, y).to_vector<bool>() == std::vector<bool>{false, false, true, false});
  CHECK(rt::logical_or(x, y).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(rt::logical_xor(x, y).to_vector<bool>() == std::vector<bool>{false, true, false, true});
  CHECK(rt::logical_and(x.reshape({4, 1}), y).sizes() == rt::Shape{4, 4});

  Tensor s = rt::tensor({NAN, INFINITY, -INFINITY, 1.f, 0.f});
  CHECK(rt::isnan(s).to_vector<bool>() == std::vector<bool>{true, false, false, false, false});
  CHECK(rt::isinf(s).to_vector<bool>() == std::vector<bool>{false, true, true, false, false});
  CHECK(rt::isinf(s.to(rt::kFloat16)).to_vector<bool>() == std::vector<bool>{false, true, true, false, false});
  CHECK(rt::isnan(x).to_vector<bool>() == std::vector<bool>(4, false));
  CHECK(rt::isinf(x).dtype() == rt::kBool);
}

TEST_CASE("where and masked_fill broadcast") {
  Tensor cond = ints({1, 0, 1}).view({3, 1}).to(rt::kBool);
  Tensor a = rt::arange(4).to(rt::kFloat32), b = rt::full({3, 4}, -1.0);
  Tensor w = rt::where(cond, a, b);
  REQUIRE(w.sizes() == rt::Shape{3, 4});
  CHECK(w.to_vector<float>() == std::vector<float>{0, 1, 2, 3, -1, -1, -1, -1, 0, 1, 2, 3});
  CHECK(rt::where(cond.to(rt::kUInt8), a, b).to_vector<float>() == w.to_vector<float>());

  Tensor m = ints({0, 1, 0, 1}).to(rt::kBool);
  Tensor x = rt::arange(8).view({2, 4});
  Tensor f = rt::masked_fill(x, m, 9);
  CHECK(f.dtype() == rt::kInt64);
  CHECK(f.to_vector<int64_t>() == std::vector<int64_t>{0, 9, 2, 9, 4, 9, 6, 9});
  CHECK(x.to_vector<int64_t>()[1] == 1);
  // The mask may be larger than self: the result takes the broadcast shape.
  Tensor big = rt::masked_fill(rt::tensor({5.f}), m, -1.5);
  CHECK(big.to_vector<float>() == std::vector<float>{5, -1.5f, 5, -1.5f});
  Tensor nonc = x.t();  // [4, 2], strided
  CHECK(rt::masked_fill(nonc, m.view({4, 1}), 0).to_vector<int64_t>() == std::vector<int64_t>{0, 4, 0, 0, 2, 6, 0, 0});
}

TEST_CASE("in-place clamp_, pow_ and masked_fill_ write into self and bump its version") {
  Tensor x = rt::tensor({-2.f, 0.5f, 3.f});
  const auto v0 = x.version();
  Tensor& r = x.clamp_(-1, 1);
  CHECK(&r == &x);
  CHECK(x.version() > v0);
  CHECK(x.to_vector<float>() == std::vector<float>{-1.f, 0.5f, 1.f});
  x.pow_(2);
  CHECK(x.to_vector<float>() == std::vector<float>{1.f, 0.25f, 1.f});
  x.masked_fill_(ints({1, 0, 0}).to(rt::kBool), 7);
  CHECK(x.to_vector<float>() == std::vector<float>{7.f, 0.25f, 1.f});

  Tensor i = ints({-3, 2, 5});
  i.clamp_(0, 4);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4});
  i.pow_(3);
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{0, 8, 64});

  // Method forms of the unary ops run in place through apply_inplace.
  Tensor m = rt::tensor({-1.f, 0.f, 2.f});
  m.relu_();
  m.exp_();
  rtt::require_close(m, rt::tensor({1.f, 1.f, std::exp(2.f)}));
  CHECK_THROWS_AS(ints({1, 4}).sqrt_(), rt::DTypeError);

  // Writes go through views into the base tensor.
  Tensor base = rt::zeros({3, 4});
  Tensor row = base.select(0, 1);
  row.masked_fill_(ints({1, 0, 1, 0}).to(rt::kBool), 2);
  base.t().clamp_(0.5, 1.5);
  CHECK(base.to_vector<float>() == std::vector<float>{.5f, .5f, .5f, .5f, 1.5f, .5f, 1.5f, .5f, .5f, .5f, .5f, .5f});
}

TEST_CASE("in-place ops with autograd record history and respect saved versions") {
  Tensor leaf = rt::tensor({-2.0, 0.25, 0.75, 3.0}).requires_grad_();
  Tensor y = leaf * 1;
  y.clamp_(0, 1);
  REQUIRE(y.grad_fn());
  CHECK(y.grad_fn()->name() == "ClampBackward1");
  Tensor z = y * 1;
  z.pow_(2);
  CHECK(z.grad_fn()->name() == "PowBackward0");
  z.masked_fill_(ints({0, 0, 1, 0}).to(rt::kBool), 0);
  CHECK(z.grad_fn()->name() == "MaskedFillBackward0");
  z.sum().backward();
  rtt::require_close(leaf.grad(), rt::tensor({0.0, 0.5, 0.0, 0.0}));

  Tensor leaf2 = rt::tensor({1.0, 2.0}).requires_grad_();
  Tensor u = leaf2 * 1;
  Tensor l = rt::log(u);  // saves u
  u.pow_(2);
  CHECK_THROWS_AS(l.sum().backward(), rt::AutogradError);

  check_throws_mentioning<rt::AutogradError>([&] { leaf2.clamp_(0, 1); }, {"clamp_"});
  {
    rt::NoGradGuard g;
    leaf2.clamp_(0, 1.5);
  }
  CHECK(leaf2.to_vector<double>() == std::vector<double>{1.0, 1.5});
}

TEST_CASE("backward node names and special-point gradients") {
  Tensor x = rt::tensor({-1.0, 0.0, 2.0}).requires_grad_();
  const std::vector<std::pair<Tensor, std::string>> named = {
      {rt::abs(x), "AbsBackward0"},           {rt::sign(x), "SignBackward0"},
      {rt::exp(x), "ExpBackward0"},           {rt::log(x), "LogBackward0"},
      {rt::log1p(x), "Log1PBackward0"},       {rt::sqrt(x), "SqrtBackward0"},
      {rt::rsqrt(x), "RsqrtBackward0"},       {rt::square(x), "PowBackward0"},
      {rt::reciprocal(x), "ReciprocalBackward0"}, {rt::sin(x), "SinBackward0"},
      {rt::cos(x), "CosBackward0"},           {rt::tanh(x), "TanhBackward0"},
      {rt::sigmoid(x), "SigmoidBackward0"},   {rt::relu(x), "ReluBackward0"},
      {rt::leaky_relu(x), "LeakyReluBackward0"}, {rt::gelu(x), "GeluBackward0"},
      {rt::silu(x), "SiluBackward0"},         {rt::softplus(x), "SoftplusBackward0"},
      {rt::pow(x, 3), "PowBackward0"},        {rt::pow(x, x), "PowBackward1"},
      {rt::pow(2.0, x), "PowBackward2"},      {rt::clamp(x, 0), "ClampBackward1"},
      {rt::maximum(x, x), "MaximumBackward0"}, {rt::minimum(x, x), "MinimumBackward0"},
      {rt::where(x.gt(rt::scalar_to_tensor(0)), x, x), "WhereBackward0"},
      {rt::masked_fill(x, x.gt(rt::scalar_to_tensor(0)), 1), "MaskedFillBackward0"},
  };
  for (const auto& [t, name] : named) {
    REQUIRE(t.grad_fn());
    CHECK(t.grad_fn()->name() == name);
  }
  CHECK_FALSE(x.gt(rt::scalar_to_tensor(0)).requires_grad());
  CHECK_FALSE(rt::isnan(x).requires_grad());

  auto grad_of = [](const Tensor& out, const TensorList& in) { return rt::autograd::grad({out.sum()}, in); };
  SECTION("relu passes gradient only where the result is positive") {
    rtt::require_close(grad_of(rt::relu(x), {x})[0], rt::tensor({0.0, 0.0, 1.0}));
  }
  SECTION("abs has zero gradient at zero") {
    rtt::require_close(grad_of(rt::abs(x), {x})[0], rt::tensor({-1.0, 0.0, 1.0}));
  }
  SECTION("maximum and minimum split ties evenly") {
    Tensor a = rt::tensor({1.0, 2.0, 3.0}).requires_grad_(), b = rt::tensor({1.0, 0.0, 5.0}).requires_grad_();
    auto g = grad_of(rt::maximum(a, b), {a, b});
    rtt::require_close(g[0], rt::tensor({0.5, 1.0, 0.0}));
    rtt::require_close(g[1], rt::tensor({0.5, 0.0, 1.0}));
    g = grad_of(rt::minimum(a, b), {a, b});
    rtt::require_close(g[0], rt::tensor({0.5, 0.0, 1.0}));
    rtt::require_close(g[1], rt::tensor({0.5, 1.0, 0.0}));
  }
  SECTION("clamp passes gradient where min <= x <= max, bounds included") {
    Tensor c = rt::tensor({-1.0, 0.0, 0.5, 1.0, 2.0}).requires_grad_();
    rtt::require_close(grad_of(rt::clamp(c, 0, 1), {c})[0], rt::tensor({0.0, 1.0, 1.0, 1.0, 0.0}));
  }
  SECTION("where routes gradients to the selected operand, summed over broadcasting") {
    Tensor a = rt::tensor({1.0, 2.0}).requires_grad_(), b = rt::tensor({3.0}).requires_grad_();
    Tensor cond = ints({1, 0, 0, 1}).view({2, 2}).to(rt::kBool);
    auto g = grad_of(rt::where(cond, a, b), {a, b});
    rtt::require_close(g[0], rt::tensor({1.0, 1.0}));
    rtt::require_close(g[1], rt::tensor({2.0}));
  }
  SECTION("masked_fill has zero gradient at masked positions") {
    Tensor a = rt::tensor({1.0, 2.0, 3.0}).requires_grad_();
    Tensor mask = ints({1, 0, 1, 0, 0, 0}).view({2, 3}).to(rt::kBool);
    rtt::require_close(grad_of(rt::masked_fill(a, mask, 0), {a})[0], rt::tensor({1.0, 2.0, 1.0}));
  }
  SECTION("pow's exponent gradient is zero where the base is 0 and the exponent >= 0") {
    Tensor base = rt::tensor({0.0, 2.0, 0.0}).requires_grad_(), ex = rt::tensor({2.0, 3.0, 0.0}).requires_grad_();
    auto g = grad_of(rt::pow(base, ex), {base, ex});
    rtt::require_close(g[0], rt::tensor({0.0, 12.0, 0.0}));
    rtt::require_close(g[1], rt::tensor({0.0, 8.0 * std::log(2.0), 0.0}));
    Tensor e2 = rt::tensor({1.0, 0.0}).requires_grad_();
    rtt::require_close(grad_of(rt::pow(0.0, e2), {e2})[0], rt::tensor({0.0, 0.0}));
    rtt::require_close(grad_of(rt::pow(x, 0), {x})[0], rt::tensor({0.0, 0.0, 0.0}));
  }
  SECTION("float32 and float16 inputs get gradients of their own dtype") {
    Tensor h = rt::tensor({0.5f, -1.f}).to(rt::kFloat16).requires_grad_();
    Tensor g = grad_of(rt::sigmoid(h), {h})[0];
    CHECK(g.dtype() == rt::kFloat16);
    rtt::require_close(g, rt::tensor({float(sigmoid_ref(.5) * (1 - sigmoid_ref(.5))), float(sigmoid_ref(-1) * (1 - sigmoid_ref(-1)))}), 2e-3);
  }
}

TEST_CASE("gradients match finite differences") {
  auto mask = rtt::random({3, 4}, rt::kFloat64, 0, 1, 31).gt(rt::scalar_to_tensor(0.5));
  auto cond = rtt::random({4}, rt::kFloat64, 0, 1, 32).gt(rt::scalar_to_tensor(0.5));
  rtt::run_grad_cases({
      {"abs", {{3, 4}}, [](const TensorList& x) { return rt::abs(x[0]); }, 0.1, 1},
      {"abs_neg", {{3, 4}}, [](const TensorList& x) { return rt::abs(x[0]); }, -1, -0.1},
      {"sign", {{5}}, [](const TensorList& x) { return rt::sign(x[0]); }, 0.1, 1},
      {"exp", {{3, 4}}, [](const TensorList& x) { return rt::exp(x[0]); }},
      {"log", {{3, 4}}, [](const TensorList& x) { return rt::log(x[0]); }, 0.5, 2},
      {"log1p", {{3, 4}}, [](const TensorList& x) { return rt::log1p(x[0]); }, -0.5, 1},
      {"sqrt", {{3, 4}}, [](const TensorList& x) { return rt::sqrt(x[0]); }, 0.5, 2},
      {"rsqrt", {{3, 4}}, [](const TensorList& x) { return rt::rsqrt(x[0]); }, 0.5, 2},
      {"square", {{3, 4}}, [](const TensorList& x) { return rt::square(x[0]); }},
      {"reciprocal", {{3, 4}}, [](const TensorList& x) { return rt::reciprocal(x[0]); }, 0.5, 2},
      {"sin", {{3, 4}}, [](const TensorList& x) { return rt::sin(x[0]); }, -3, 3},
      {"cos", {{3, 4}}, [](const TensorList& x) { return rt::cos(x[0]); }, -3, 3},
      {"tanh", {{3, 4}}, [](const TensorList& x) { return rt::tanh(x[0]); }, -2, 2},
      {"sigmoid", {{3, 4}}, [](const TensorList& x) { return rt::sigmoid(x[0]); }, -4, 4},
      {"relu", {{3, 4}}, [](const TensorList& x) { return rt::relu(x[0]); }},
      {"leaky_relu", {{3, 4}}, [](const TensorList& x) { return rt::leaky_relu(x[0], 0.1); }},
      {"gelu", {{3, 4}}, [](const TensorList& x) { return rt::gelu(x[0]); }, -3, 3},
      {"gelu_tanh", {{3, 4}}, [](const TensorList& x) { return rt::gelu(x[0], "tanh"); }, -3, 3},
      {"silu", {{3, 4}}, [](const TensorList& x) { return rt::silu(x[0]); }, -4, 4},
      {"softplus", {{3, 4}}, [](const TensorList& x) { return rt::softplus(x[0]); }, -4, 4},
      {"softplus_beta", {{3, 4}}, [](const TensorList& x) { return rt::softplus(x[0], 2.0, 3.0); }, -1, 1},
      {"softplus_linear", {{3, 4}}, [](const TensorList& x) { return rt::softplus(x[0], 2.0, 3.0); }, 2, 3},
      {"pow_scalar", {{3, 4}}, [](const TensorList& x) { return rt::pow(x[0], 2.5); }, 0.5, 2},
      {"pow_3", {{3, 4}}, [](const TensorList& x) { return rt::pow(x[0], 3); }},
      {"pow_-1", {{3, 4}}, [](const TensorList& x) { return rt::pow(x[0], -1); }, 0.5, 2},
      {"pow_0.5", {{3, 4}}, [](const TensorList& x) { return rt::pow(x[0], 0.5); }, 0.5, 2},
      {"pow_tensor", {{3, 4}, {3, 4}}, [](const TensorList& x) { return rt::pow(x[0], x[1]); }, 0.5, 2},
      {"pow_broadcast", {{3, 1}, {4}}, [](const TensorList& x) { return rt::pow(x[0], x[1]); }, 0.5, 2},
      {"pow_scalar_base", {{3, 4}}, [](const TensorList& x) { return rt::pow(2.5, x[0]); }},
      {"clamp", {{4, 5}}, [](const TensorList& x) { return rt::clamp(x[0], -0.5, 0.5); }},
      {"clamp_min", {{4, 5}}, [](const TensorList& x) { return x[0].clamp_min(0.2); }},
      {"clamp_max", {{4, 5}}, [](const TensorList& x) { return x[0].clamp_max(-0.2); }},
      {"maximum", {{3, 4}, {4}}, [](const TensorList& x) { return rt::maximum(x[0], x[1]); }},
      {"minimum", {{3, 1}, {3, 4}}, [](const TensorList& x) { return rt::minimum(x[0], x[1]); }},
      {"where", {{3, 1}, {4}}, [cond](const TensorList& x) { return rt::where(cond, x[0], x[1]); }},
      {"masked_fill", {{3, 4}}, [mask](const TensorList& x) { return rt::masked_fill(x[0], mask, 2.0); }},
      {"masked_fill_broadcast", {{4}}, [mask](const TensorList& x) { return rt::masked_fill(x[0], mask, 2.0); }},
      {"clamp_inplace", {{3, 4}}, [](const TensorList& x) { Tensor y = x[0] * 1; return y.clamp_(-0.3, 0.6); }},
      {"pow_inplace", {{3, 4}}, [](const TensorList& x) { Tensor y = x[0] * 1; return y.pow_(3); }},
      {"masked_fill_inplace", {{3, 4}}, [mask](const TensorList& x) { Tensor y = x[0] * 1; return y.masked_fill_(mask, 0); }},
      {"chain", {{3, 4}}, [](const TensorList& x) { return rt::sigmoid(rt::gelu(x[0]) * 2).log(); }},
  });
}

TEST_CASE("errors name the op, the operands' shapes and the problem") {
  Tensor a = rt::zeros({2, 3}), b = rt::zeros({4});
  check_throws_mentioning<rt::ShapeError>([&] { rt::maximum(a, b); }, {"maximum", "[2, 3]", "[4]"});
  check_throws_mentioning<rt::ShapeError>([&] { rt::pow(a, b); }, {"pow", "[2, 3]", "[4]"});
  check_throws_mentioning<rt::ShapeError>([&] { rt::lt(a, b); }, {"lt", "[2, 3]", "[4]"});
  check_throws_mentioning<rt::ShapeError>([&] { rt::logical_and(a, b); }, {"logical_and", "[2, 3]", "[4]"});
  check_throws_mentioning<rt::ShapeError>([&] { rt::where(a.gt(a), a, b); }, {"where", "[4]"});
  Tensor m = rt::ones({2, 2, 3}).to(rt::kBool);
  check_throws_mentioning<rt::ShapeError>([&] { a.masked_fill_(m, 1); }, {"masked_fill_", "[2, 3]", "[2, 2, 3]"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::masked_fill(a, rt::ones({3}), 1); }, {"masked_fill", "float32", "[3]"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::where(rt::ones({3}), b, b); }, {"where", "float32"});
  Tensor iv = ints({1, 2});
  check_throws_mentioning<rt::ValueError>([&] { rt::pow(iv, -1); }, {"pow", "negative", "int64"});
  check_throws_mentioning<rt::ValueError>([&] { iv.pow_(-2); }, {"pow_", "negative"});
  check_throws_mentioning<rt::DTypeError>([&] { iv.clamp_(0.5, 1.5); }, {"clamp_", "float32", "int64"});
  check_throws_mentioning<rt::DTypeError>([&] { iv.pow_(0.5); }, {"pow_", "int64"});
  check_throws_mentioning<rt::ValueError>([&] { rt::clamp(a, std::nullopt, std::nullopt); }, {"clamp", "min", "max"});
  check_throws_mentioning<rt::ValueError>([&] { rt::gelu(a, "fast"); }, {"gelu", "fast"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::relu(m); }, {"relu", "Boolean"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::abs(m); }, {"abs", "bool"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::pow(m, true); }, {"pow", "bool"});
}

TEST_CASE("results do not depend on the thread count") {
  Tensor x = rtt::random({5 * rt::cpu::kParallelGrain + 7}, rt::kFloat32, -8, 8, 41);
  Tensor y = rtt::random({5 * rt::cpu::kParallelGrain + 7}, rt::kFloat32, -8, 8, 42);
  const int before = rt::get_num_threads();
  auto run = [&] {
    return std::vector<Tensor>{rt::gelu(x, "tanh"), rt::silu(x), rt::maximum(x, y), rt::pow(x.abs(), y), x.lt(y),
                               rt::where(x.gt(y), x, y), rt::clamp(x, -1, 1)};
  };
  rt::set_num_threads(1);
  auto one = run();
  rt::set_num_threads(3);
  auto three = run();
  rt::set_num_threads(before);
  for (size_t i = 0; i < one.size(); ++i) CHECK(rtt::values(one[i]) == rtt::values(three[i]));
}
