// remainder, fmod, floor_divide and div with a rounding mode: PyTorch 1.13's values (signs,
// zeros, infinities, integer corner cases), dtype rules, integer division by zero, in-place
// forms, broadcasting and views, and gradients.
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

Tensor ints(const std::vector<int64_t>& v) { return rt::from_vector(v); }
std::vector<int64_t> int_values(const Tensor& t) { return t.to(rt::kInt64).to_vector<int64_t>(); }

// Exact comparison that tells -0.0 from 0.0 and matches NaN with NaN.
void require_same(const Tensor& actual, const std::vector<double>& expected) {
  const std::vector<double> got = rtt::values(actual);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    if (std::isnan(expected[i])) {
      CHECK(std::isnan(got[i]));
    } else {
      CHECK(got[i] == expected[i]);
      CHECK(std::signbit(got[i]) == std::signbit(expected[i]));
    }
  }
}

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

// Python's semantics in float64, the reference for random inputs.
double py_mod(double a, double b) {
  const double m = std::fmod(a, b);
  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}

}  // namespace

TEST_CASE("integer remainder, fmod, floor_divide and trunc division follow Python's and C's signs") {
  const Tensor a = ints({-7, -1, 0, 1, 7}), b = ints({2, -2, 3, -3, -2});
  // Values from PyTorch 1.13.
  CHECK(int_values(rt::floor_divide(a, b)) == std::vector<int64_t>{-4, 0, 0, -1, -4});
  CHECK(int_values(rt::remainder(a, b)) == std::vector<int64_t>{1, -1, 0, -2, -1});
  CHECK(int_values(a % b) == std::vector<int64_t>{1, -1, 0, -2, -1});
  CHECK(int_values(rt::fmod(a, b)) == std::vector<int64_t>{-1, -1, 0, 1, 1});
  CHECK(int_values(rt::div(a, b, "trunc")) == std::vector<int64_t>{-3, 0, 0, 0, -3});
  CHECK(int_values(rt::div(a, b, "floor")) == std::vector<int64_t>{-4, 0, 0, -1, -4});
  CHECK(rt::remainder(a, b).dtype() == rt::kInt64);

  // Every sign combination against Python's identities: a == b * (a // b) + a % b, and
  // a % b has the divisor's sign, fmod the dividend's.
  for (int64_t x = -9; x <= 9; ++x)
    for (int64_t y : {-4, -3, -1, 1, 2, 5}) {
      const int64_t q = rt::floor_divide(ints({x}), ints({y})).item<int64_t>();
      const int64_t r = rt::remainder(ints({x}), ints({y})).item<int64_t>();
      const int64_t f = rt::fmod(ints({x}), ints({y})).item<int64_t>();
      INFO(x << " and " << y);
      CHECK(q * y + r == x);
      CHECK((r == 0 || (r < 0) == (y < 0)));
      CHECK(f == x % y);
    }

  // Values near the int64 limits (PyTorch 1.13), and INT_MIN / -1, which traps in C (and
  // in PyTorch's CPU kernel), wraps here.
  const int64_t big = (int64_t(1) << 62) + 1, lowest = std::numeric_limits<int64_t>::min();
  CHECK(int_values(rt::floor_divide(ints({big, -big}), 3)) ==
        std::vector<int64_t>{1537228672809129301, -1537228672809129302});
  CHECK(int_values(rt::remainder(ints({big, -big}), -3)) == std::vector<int64_t>{-1, -2});
  CHECK(int_values(rt::floor_divide(ints({lowest, 6}), -1)) == std::vector<int64_t>{lowest, -6});
  CHECK(int_values(rt::div(ints({lowest}), ints({-1}), "trunc")) == std::vector<int64_t>{lowest});
  CHECK(int_values(rt::remainder(ints({lowest}), -1)) == std::vector<int64_t>{0});
  CHECK(int_values(rt::fmod(ints({lowest}), -1)) == std::vector<int64_t>{0});
  const Tensor i32_min = ints({std::numeric_limits<int32_t>::min()}).to(rt::kInt32);
  CHECK(int_values(rt::floor_divide(i32_min, -1)) == std::vector<int64_t>{std::numeric_limits<int32_t>::min()});

  // uint8: a Python number is converted to uint8 first (-3 -> 253), as in PyTorch.
  const Tensor u8 = ints({5, 250}).to(rt::kUInt8);
  CHECK(int_values(rt::remainder(u8, -3)) == std::vector<int64_t>{5, 250});
  CHECK(int_values(rt::floor_divide(u8, 7)) == std::vector<int64_t>{0, 35});
  CHECK(rt::floor_divide(u8, 7).dtype() == rt::kUInt8);
}

TEST_CASE("floating remainder, fmod and floor_divide keep PyTorch's signed zeros, infinities and NaN") {
  const Tensor f = rt::tensor({-7.5f, -0.f, 0.f, 5.f, 7.5f});
  const double nan = std::nan("");
  require_same(rt::floor_divide(f, 2), {-4, -0.0, 0, 2, 3});
  require_same(f % 2, {0.5, -0.0, 0, 1, 1.5});
  require_same(rt::fmod(f, 2), {-1.5, -0.0, 0, 1, 1.5});
  require_same(f % -2, {-1.5, -0.0, 0, -1, -0.5});
  require_same(rt::div(f, rt::scalar_to_tensor(-2), "trunc"), {3, 0, -0.0, -2, -3});
  // Division by zero gives IEEE's inf and nan, never an error.
  require_same(rt::floor_divide(f, 0), {-kInf, nan, nan, kInf, kInf});
  require_same(f % 0, {nan, nan, nan, nan, nan});
  require_same(rt::fmod(f, 0.0), {nan, nan, nan, nan, nan});
  require_same(rt::floor_divide(rt::tensor({7.f, -7.f}), rt::tensor({-0.f, 0.f})), {-kInf, -kInf});
  // Zero quotients take the sign of a / b.
  require_same(rt::floor_divide(rt::tensor({0.f, -0.f}), 3), {0, -0.0});
  require_same(rt::floor_divide(rt::tensor({0.f, -0.f}), -3), {-0.0, 0});
  // Infinite divisors and dividends, NaN.
  require_same(rt::tensor({5.f, -5.f}) % kInf, {5, kInf});
  require_same(rt::floor_divide(rt::tensor({5.f, -5.f}), kInf), {0, -1});
  require_same(rt::tensor({float(nan), float(kInf), float(-kInf), 1.f}) % 3, {nan, nan, nan, 1});
  require_same(rt::floor_divide(rt::tensor({1.f, -1.f}), nan), {nan, nan});
  // fmod is exact, so huge dividends keep their remainder (PyTorch 1.13's values).
  require_same(rt::tensor({1e20f, -1e20f, 5.3f, -5.3f}) % 3, {2, 1, 2.3000001907348633, 0.6999998092651367});
}

TEST_CASE("random floating inputs match float64 references in float64 and float32") {
  for (rt::ScalarType dt : {rt::kFloat64, rt::kFloat32}) {
    const Tensor a = rtt::random({400}, dt, -50, 50, 1), b0 = rtt::random({400}, dt, 0.25, 4, 2);
    const Tensor b = b0 * (rtt::random({400}, rt::kFloat64, 0, 1, 3).gt(rt::scalar_to_tensor(0.5)).to(dt) * 2 - 1);
    const std::vector<double> av = rtt::values(a), bv = rtt::values(b);
    const std::vector<double> rem = rtt::values(rt::remainder(a, b)), fm = rtt::values(rt::fmod(a, b));
    const std::vector<double> fd = rtt::values(rt::floor_divide(a, b)), td = rtt::values(rt::div(a, b, "trunc"));
    for (size_t i = 0; i < av.size(); ++i) {
      INFO(dtype_name(dt) << " " << av[i] << " and " << bv[i]);
      // fmod is exact, and remainder rounds m + b once, in float32 as in float64.
      CHECK(fm[i] == std::fmod(av[i], bv[i]));
      CHECK(rem[i] == (dt == rt::kFloat32 ? double(float(py_mod(av[i], bv[i]))) : py_mod(av[i], bv[i])));
      CHECK(fd[i] == std::floor(av[i] / bv[i]));
      CHECK(td[i] == std::trunc(av[i] / bv[i]));
    }
  }
}

TEST_CASE("float16 and bfloat16 compute in float and keep their dtype") {
  for (rt::ScalarType dt : {rt::kFloat16, rt::kBFloat16}) {
    const Tensor a = rt::tensor({-7.5f, 5.f, 7.5f, 100.f}).to(dt), b = rt::tensor({2.f, -2.f, 0.25f, -3.f}).to(dt);
    CHECK(rt::remainder(a, b).dtype() == dt);
    require_same(rt::remainder(a, b), {0.5, -1, 0, -2});
    require_same(rt::fmod(a, b), {-1.5, 1, 0, 1});
    require_same(rt::floor_divide(a, b), {-4, -3, 30, -34});
  }
  // Mixed half types promote to float32, as in PyTorch.
  CHECK(rt::remainder(rt::ones({2}).to(rt::kFloat16), rt::ones({2}).to(rt::kBFloat16)).dtype() == rt::kFloat32);
}

TEST_CASE("rounding divisions promote like PyTorch and refuse bool") {
  const Tensor i64 = ints({5, -5});
  CHECK(rt::remainder(i64, 3).dtype() == rt::kInt64);
  CHECK(rt::remainder(i64.to(rt::kInt32), 3).dtype() == rt::kInt32);
  CHECK(rt::remainder(i64.to(rt::kInt32), ints({3})).dtype() == rt::kInt64);
  // int % float -> float32, whether the float is a number or a 0-dim float64 tensor.
  const Tensor r = rt::remainder(i64, 2.5);
  CHECK(r.dtype() == rt::kFloat32);
  require_same(r, {0.0, -0.0});  // fmod(-5, 2.5) is -0.0, which keeps its sign
  CHECK(rt::remainder(i64, rt::scalar_tensor(3.0, rt::kFloat64)).to_vector<float>() == std::vector<float>{2.f, 1.f});
  CHECK(rt::fmod(i64, -3.5).to_vector<float>() == std::vector<float>{1.5f, -1.5f});
  // A number first: remainder(Scalar, Tensor).
  CHECK(int_values(rt::remainder(-5, ints({3, -3}))) == std::vector<int64_t>{1, -2});
  CHECK(int_values(-5 % ints({3, -3})) == std::vector<int64_t>{1, -2});
  CHECK(rt::remainder(-5.5, ints({3, -3})).to_vector<float>() == std::vector<float>{0.5f, -2.5f});
  // bool with a number or an integer is fine; bool with bool is refused, as in PyTorch.
  const Tensor bools = ints({1, 0}).to(rt::kBool);
  CHECK(int_values(bools % 2) == std::vector<int64_t>{1, 0});
  CHECK(rt::remainder(bools, 2).dtype() == rt::kInt64);
  CHECK(int_values(rt::floor_divide(ints({3}), ints({1}).to(rt::kBool))) == std::vector<int64_t>{3});
  check_throws_mentioning<rt::DTypeError>([&] { rt::remainder(bools, bools); }, {"remainder", "bool", "[2]"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::fmod(bools, true); }, {"fmod", "bool"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::floor_divide(bools, bools); }, {"floor_divide", "bool"});
  check_throws_mentioning<rt::DTypeError>([&] { rt::div(bools, bools, "trunc"); }, {"div", "bool"});
  check_throws_mentioning<rt::ValueError>([&] { rt::div(i64, i64, "round"); }, {"div", "rounding_mode", "round"});
  check_throws_mentioning<rt::ShapeError>([&] { rt::remainder(rt::ones({2, 3}), rt::ones({4})); },
                                          {"remainder", "[2, 3]", "[4]"});
}

TEST_CASE("integer division by zero throws ZeroDivisionError and writes nothing") {
  const Tensor a = ints({7, -7, 3});
  for (const char* op : {"remainder", "fmod", "floor_divide", "div trunc", "div floor"}) {
    const std::string name = op;
    auto run = [&](const Tensor& x, const Tensor& y) {
      if (name == "remainder") return rt::remainder(x, y);
      if (name == "fmod") return rt::fmod(x, y);
      if (name == "floor_divide") return rt::floor_divide(x, y);
      return rt::div(x, y, name == "div trunc" ? "trunc" : "floor");
    };
    INFO(name);
    const std::string reported = name.substr(0, name.find(' '));
    check_throws_mentioning<rt::ZeroDivisionError>([&] { run(a, ints({1, 0, 2})); },
                                                   {reported, "division by zero", "int64", "[3]"});
    check_throws_mentioning<rt::ZeroDivisionError>([&] { run(a, rt::scalar_to_tensor(0)); }, {reported});
    check_throws_mentioning<rt::ZeroDivisionError>([&] { run(a.to(rt::kInt32), rt::scalar_tensor(0, rt::kInt64)); },
                                                   {reported, "int32"});
    // A float divisor makes the division a float one: no error.
    CHECK(rt::isnan(run(a, rt::scalar_to_tensor(0.0))).any().item<bool>() == (name == "remainder" || name == "fmod"));
  }
  // 256 converted to uint8 is 0 (PyTorch raises there too).
  CHECK_THROWS_AS(rt::remainder(ints({5}).to(rt::kUInt8), 256), rt::ZeroDivisionError);
  // In place: self is left as it was.
  Tensor s = ints({9, 8, 7});
  const uint32_t version = s.version();
  CHECK_THROWS_AS(s.floor_divide_(ints({2, 0, 1})), rt::ZeroDivisionError);
  CHECK_THROWS_AS(s.remainder_(0), rt::ZeroDivisionError);
  CHECK(int_values(s) == std::vector<int64_t>{9, 8, 7});
  CHECK(s.version() == version);
  // The zero is found wherever it sits in a tensor split across threads.
  const int old_threads = rt::get_num_threads();
  rt::set_num_threads(2);
  Tensor big = rt::ones({5 * rt::cpu::kParallelGrain + 3}, rt::TensorOptions(rt::kInt64));
  big.narrow(0, 5 * rt::cpu::kParallelGrain + 1, 1).fill_(0);
  CHECK_THROWS_AS(rt::remainder(big, big), rt::ZeroDivisionError);
  rt::set_num_threads(old_threads);
}

TEST_CASE("rounding divisions broadcast, read views and match across thread counts") {
  const Tensor a = rtt::random({6, 5}, rt::kFloat32, -20, 20, 7);
  const Tensor b = rtt::random({5, 6}, rt::kFloat32, 0.5, 3, 8);
  const Tensor at = a.t(), bt = b.t();  // non-contiguous views
  REQUIRE_FALSE(at.is_contiguous());
  rtt::require_close(rt::remainder(at, b), rt::remainder(at.contiguous(), b), 0, 0);
  rtt::require_close(rt::floor_divide(a, bt), rt::floor_divide(a, bt.contiguous()), 0, 0);
  // [6, 5] with [5] and [6, 1].
  const Tensor row = rtt::random({5}, rt::kFloat32, 1, 2, 9), col = rtt::random({6, 1}, rt::kFloat32, 1, 2, 10);
  rtt::require_close(rt::fmod(a, row), rt::fmod(a, row.expand({6, 5}).contiguous()), 0, 0);
  rtt::require_close(rt::remainder(a, col), rt::remainder(a, col.expand({6, 5}).contiguous()), 0, 0);
  CHECK(rt::remainder(rtt::random({3, 1, 5}), rtt::random({4, 1}, rt::kFloat64, 1, 2)).sizes() == rt::Shape{3, 4, 5});

  const Tensor x = rtt::random({3 * rt::cpu::kParallelGrain + 11}, rt::kFloat32, -1e4, 1e4, 11);
  const Tensor y = rtt::random({3 * rt::cpu::kParallelGrain + 11}, rt::kFloat32, 0.1, 9, 12);
  const int old_threads = rt::get_num_threads();
  rt::set_num_threads(1);
  const Tensor one = rt::floor_divide(x, y), one_rem = x % y;
  rt::set_num_threads(2);
  rtt::require_close(rt::floor_divide(x, y), one, 0, 0);
  rtt::require_close(x % y, one_rem, 0, 0);
  rt::set_num_threads(old_threads);
}

TEST_CASE("in-place rounding divisions compute in the result type and store in self's dtype") {
  Tensor f = rt::tensor({5.f, 6.f, -7.f});
  const uint32_t v0 = f.version();
  f.remainder_(4);
  CHECK(f.to_vector<float>() == std::vector<float>{1.f, 2.f, 1.f});
  CHECK(f.version() == v0 + 1);
  f.floor_divide_(rt::tensor({1.f, 2.f, -2.f}));
  CHECK(f.to_vector<float>() == std::vector<float>{1.f, 1.f, -1.f});
  Tensor i = ints({5, -6});
  i.fmod_(4);
  CHECK(int_values(i) == std::vector<int64_t>{1, -2});
  rt::div_(i, ints({2}), "floor");
  CHECK(int_values(i) == std::vector<int64_t>{0, -1});
  // int %= float cannot be stored in int64, as in PyTorch.
  check_throws_mentioning<rt::DTypeError>([&] { i.remainder_(2.5); }, {"remainder_", "float32", "int64"});
  check_throws_mentioning<rt::ShapeError>([&] { ints({5, 6}).view({1, 2}).remainder_(ints({2, 3}).view({2, 1})); },
                                          {"remainder_"});
  // int32 self // int64 divisor divides in int64: 5 // (2^32 + 2) is 0, not 5 // 2.
  Tensor i32 = ints({5, 9}).to(rt::kInt32);
  i32.floor_divide_(ints({(int64_t(1) << 32) + 2, 2}));
  CHECK(int_values(i32) == std::vector<int64_t>{0, 4});
  CHECK(i32.dtype() == rt::kInt32);
  // float16 self % float32 divisor divides in float32, then rounds once.
  Tensor h = rt::tensor({1000.f, -777.f}).to(rt::kFloat16);
  const Tensor d = rt::tensor({0.3f, 0.7f});
  const Tensor expected = rt::remainder(h, d).to(rt::kFloat16);
  h.remainder_(d);
  rtt::require_close(h, expected, 0, 0);
  CHECK(h.dtype() == rt::kFloat16);
  // A view writes through to its base.
  Tensor base = rt::tensor({10.f, 11.f, 12.f, 13.f}, {2, 2});
  Tensor column = base.t().select(0, 1);
  column.remainder_(5);
  CHECK(base.to_vector<float>() == std::vector<float>{10.f, 1.f, 12.f, 3.f});
}

TEST_CASE("rounding divisions record PyTorch's backward nodes") {
  const Tensor x = rt::tensor({5.5, -3.2, 7.0}).requires_grad_();
  const Tensor y = rt::tensor({2.0, 2.0, -3.0}).requires_grad_();
  const std::vector<std::pair<Tensor, std::string>> named = {
      {rt::remainder(x, y), "RemainderBackward1"}, {rt::remainder(x, 2.0), "RemainderBackward0"},
      {x % y, "RemainderBackward1"},               {rt::fmod(x, y), "FmodBackward1"},
      {rt::fmod(x, 2), "FmodBackward0"},            {rt::floor_divide(x, y), "NotImplemented"},
      {rt::remainder(3.0, y), "NotImplemented"},   {rt::div(x, y, "floor"), "DivBackward2"},
  };
  for (const auto& [t, name] : named) {
    REQUIRE(t.grad_fn());
    CHECK(t.grad_fn()->name() == name);
  }

  // PyTorch 1.13's gradients: a gets grad, b gets -grad * floor(a / b) or -grad * trunc(a / b).
  TensorList g = rt::autograd::grad({rt::remainder(x, y).sum()}, {x, y});
  rtt::require_close(g[0], rt::tensor({1.0, 1.0, 1.0}), 0, 0);
  rtt::require_close(g[1], rt::tensor({-2.0, 2.0, 3.0}), 0, 0);
  g = rt::autograd::grad({rt::fmod(x, y).sum()}, {x, y});
  rtt::require_close(g[1], rt::tensor({-2.0, 1.0, 2.0}), 0, 0);
  g = rt::autograd::grad({rt::div(x, y, "trunc").sum()}, {x, y});
  rtt::require_close(g[0], rt::zeros({3}, rt::TensorOptions(rt::kFloat64)), 0, 0);
  rtt::require_close(g[1], rt::zeros({3}, rt::TensorOptions(rt::kFloat64)), 0, 0);

  // floor_divide keeps requires_grad, and its backward throws, as PyTorch's does.
  const Tensor q = rt::floor_divide(x, y);
  CHECK(q.requires_grad());
  check_throws_mentioning<rt::NotImplementedError>([&] { rt::autograd::grad({q.sum()}, {x}); },
                                                   {"derivative for floor_divide is not implemented"});
  check_throws_mentioning<rt::NotImplementedError>([&] { rt::autograd::grad({rt::remainder(3.0, y).sum()}, {y}); },
                                                   {"derivative for remainder"});
  // In place on a non-leaf.
  Tensor h = x * 1.0;
  h.remainder_(y);
  g = rt::autograd::grad({h.sum()}, {x, y});
  rtt::require_close(g[1], rt::tensor({-2.0, 2.0, 3.0}), 0, 0);
  // Integer results never require grad.
  CHECK_FALSE(rt::remainder(ints({3}), ints({2})).requires_grad());
}

TEST_CASE("remainder and fmod gradients match finite differences") {
  // Away from a / b integer, where both jump.
  rtt::run_grad_cases({
      {"remainder", {{3, 4}, {3, 4}}, [](const TensorList& in) { return rt::remainder(in[0] * 7.0, in[1]); }, 0.5, 1.0},
      {"remainder_broadcast", {{3, 4}, {4}},
       [](const TensorList& in) { return rt::remainder(in[0] * -5.0, in[1]); }, 0.5, 1.0},
      {"remainder_negative_divisor", {{5}, {5}},
       [](const TensorList& in) { return rt::remainder(in[0] * 3.0, -in[1]); }, 0.5, 1.0},
      {"remainder_scalar", {{2, 3}}, [](const TensorList& in) { return rt::remainder(in[0], 0.3); }, 0.05, 0.25},
      {"fmod", {{3, 4}, {3, 4}}, [](const TensorList& in) { return rt::fmod(in[0] * -7.0, in[1]); }, 0.5, 1.0},
      {"fmod_broadcast", {{2, 3}, {2, 1}},
       [](const TensorList& in) { return rt::fmod(in[0] * 6.0, -in[1]); }, 0.5, 1.0},
      {"fmod_scalar", {{4}}, [](const TensorList& in) { return rt::fmod(in[0], -0.3); }, 0.05, 0.25},
  });
}
