// add/sub/mul/div: broadcasting, type promotion, Python-number operands, alpha, in-place forms,
// the rounding divisions remainder/fmod/floor_divide/div(rounding_mode), and the optimizer
// updates addcmul_/addcdiv_/lerp_.
#include <cmath>
#include <limits>

#include "cases.h"

namespace rt::op_check {
namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
struct Binary {
  const char* name;
  BinaryFn fn;
};
Tensor add2(const Tensor& a, const Tensor& b) { return rt::add(a, b); }
Tensor sub2(const Tensor& a, const Tensor& b) { return rt::sub(a, b); }
constexpr Binary kBinaries[] = {{"add", add2}, {"sub", sub2}, {"mul", rt::mul}, {"div", rt::div}};

// Divisors stay away from 0 so that div's gradient (-a / b^2) stays comparable.
Tensor operand(const Shape& s, ScalarType dt, bool divisor) {
  return divisor ? uniform_t(s, 0.5, 2.0, dt) * (mask_t(s, 0.5).to(dt) * 2 - 1) : randn_t(s, dt);
}

void broadcasting(OpCheck& check) {
  const std::pair<Shape, Shape> shapes[] = {
      {{4, 5}, {4, 5}}, {{4, 5}, {5}}, {{3, 1, 5}, {4, 1}}, {{2, 3, 4}, {1, 3, 1}}, {{1}, {6, 7}}, {{1000}, {1000}}};
  for (const Binary& op : kBinaries)
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64})
      for (const auto& [sa, sb] : shapes) {
        const bool div = op.fn == BinaryFn(rt::div);
        check.run({.op = op.name, .inputs = {randn_t(sa, dt), operand(sb, dt, div)}, .grad = {true, true},
                   .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
      }
}

void promotion(OpCheck& check) {
  // Mixed dtypes promote as PyTorch does; the gradient comes back in each input's own dtype.
  const std::pair<ScalarType, ScalarType> pairs[] = {
      {kFloat32, kFloat16}, {kFloat16, kBFloat16}, {kBFloat16, kFloat32}, {kFloat64, kFloat32}};
  for (const Binary& op : kBinaries)
    for (const auto& [ta, tb] : pairs) {
      const bool div = op.fn == BinaryFn(rt::div);
      check.run({.op = op.name, .variant = "mixed dtypes", .inputs = {randn_t({3, 4}, ta), operand({4}, tb, div)},
                 .grad = {true, true}, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    }
  // Integer tensors: int op int stays integer (div: true division to float32), int op float floats.
  for (const Binary& op : kBinaries) {
    const bool div = op.fn == BinaryFn(rt::div);
    check.run({.op = op.name, .variant = "int64 int64", .inputs = {randint_t(-50, 50, {4, 6}), randint_t(1, 9, {6})},
               .tol = Tol::Exact, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = "int32 float32", .inputs = {randint_t(-9, 9, {4, 6}, kInt32), operand({4, 6}, kFloat32, div)},
               .grad = {false, true}, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = "uint8 bool", .inputs = {randint_t(1, 100, {8}, kUInt8), randint_t(0, 2, {8}, kBool)},
               .tol = div ? Tol::Pointwise : Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
  }
}

void scalars(OpCheck& check) {
  // A 0-dim CPU tensor (a Python number, or rt.tensor(2.5)) joins a GPU operand without a copy.
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16}) {
    check.run({.op = "add", .variant = "python scalar", .inputs = {randn_t({5, 3}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return in[0] + 2.5; })});
    check.run({.op = "sub", .variant = "python scalar lhs", .inputs = {randn_t({5, 3}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return 1.5 - in[0]; })});
    check.run({.op = "mul", .variant = "python scalar", .inputs = {randn_t({5, 3}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return in[0] * -3; })});
    check.run({.op = "div", .variant = "python scalar lhs", .inputs = {uniform_t({5, 3}, 0.5, 2, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return 2.0 / in[0]; })});
    check.run({.op = "mul", .variant = "0-dim cpu float64 tensor", .inputs = {randn_t({5, 3}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return in[0] * rt::scalar_tensor(0.75, kFloat64); })});
  }
  check.run({.op = "add", .variant = "int64 + python float", .inputs = {randint_t(-5, 5, {7})},
             .fn = one([](const TensorList& in, Device) { return in[0] + 0.5; })});
  check.run({.op = "mul", .variant = "0-dim cuda tensor", .inputs = {randn_t({4, 3}), randn_t({})}, .grad = {true, true},
             .fn = one([](const TensorList& in, Device) { return in[0] * in[1]; })});
  check.run({.op = "add", .variant = "alpha=-0.5", .inputs = {randn_t({4, 3}), randn_t({3})}, .grad = {true, true},
             .fn = one([](const TensorList& in, Device) { return rt::add(in[0], in[1], -0.5); })});
  check.run({.op = "add", .variant = "bool alpha=-1 (logical or)", .inputs = {mask_t({5, 4}, 0.5), mask_t({4}, 0.5)},
             .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return rt::add(in[0], in[1], -1); })});
  check.run({.op = "sub", .variant = "alpha=2", .inputs = {randn_t({4, 3}, kFloat16), randn_t({4, 1}, kFloat16)},
             .grad = {true, true}, .fn = one([](const TensorList& in, Device) { return rt::sub(in[0], in[1], 2); })});
}

void inplace(OpCheck& check) {
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16}) {
    check.run({.op = "add_", .inputs = {randn_t({6, 4}, dt), randn_t({4}, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.add_(in[1], 0.3); })});
    check.run({.op = "sub_", .variant = "python scalar", .inputs = {randn_t({6, 4}, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.sub_(1.25); })});
    check.run({.op = "mul_", .inputs = {randn_t({6, 4}, dt), randn_t({6, 1}, kFloat32)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.mul_(in[1]); })});
    check.run({.op = "div_", .inputs = {randn_t({6, 4}, dt), uniform_t({4}, 1, 3, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.div_(in[1]); })});
  }
  // In-place on a non-contiguous view writes through to the base.
  check.run({.op = "mul_", .variant = "transposed view", .inputs = {randn_t({5, 4}), randn_t({5})},
             .fn = one([](const TensorList& in, Device) { Tensor base = in[0]; Tensor v = base.t(); v.mul_(in[1]); return base; })});
  // Autograd through an in-place op on a non-leaf.
  check.run({.op = "mul_", .variant = "autograd", .inputs = {randn_t({3, 4}), randn_t({4})}, .grad = {true, true},
             .fn = one([](const TensorList& in, Device) { Tensor h = in[0] * 2; h.mul_(in[1]); return h; })});
}

Tensor remainder2(const Tensor& a, const Tensor& b) { return rt::remainder(a, b); }
Tensor fmod2(const Tensor& a, const Tensor& b) { return rt::fmod(a, b); }
Tensor floor_divide2(const Tensor& a, const Tensor& b) { return rt::floor_divide(a, b); }
Tensor div_trunc(const Tensor& a, const Tensor& b) { return rt::div(a, b, "trunc"); }
Tensor div_floor(const Tensor& a, const Tensor& b) { return rt::div(a, b, "floor"); }
struct RoundingDivision {
  const char* name;
  const char* variant;
  BinaryFn fn;
  bool grad;  // differentiable (remainder, fmod); floor_divide's backward throws, as in PyTorch
};
constexpr RoundingDivision kRoundingDivisions[] = {{"remainder", "", remainder2, true},
                                                   {"fmod", "", fmod2, true},
                                                   {"floor_divide", "", floor_divide2, false},
                                                   {"div", "rounding_mode=trunc", div_trunc, true},
                                                   {"div", "rounding_mode=floor", div_floor, true}};

// The CPU and the GPU compute these with the same formulas (half types rounding the same
// intermediates), so results are compared exactly; gradients of broadcast operands are sums.
void rounding_division(OpCheck& check) {
  const std::pair<Shape, Shape> shapes[] = {{{4, 5}, {4, 5}}, {{3, 1, 5}, {4, 1}}, {{1000}, {1000}}};
  for (const RoundingDivision& op : kRoundingDivisions) {
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64})
      for (const auto& [sa, sb] : shapes)
        check.run({.op = op.name, .variant = op.variant, .inputs = {randn_t(sa, dt) * 4, operand(sb, dt, true)},
                   .grad = {op.grad, op.grad}, .tol = op.grad && sa != sb ? Tol::Reduction : Tol::Exact,
                   .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    // Signs, zeros, infinities and NaN; a float divisor of 0 gives inf or nan, as IEEE.
    check.run({.op = op.name, .variant = std::string(op.variant) + " special values",
               .inputs = {randint_t(-3, 4, {7, 6}).to(kFloat32)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device d) {
                 const double inf = std::numeric_limits<double>::infinity();
                 const Tensor dividends =
                     rt::tensor({inf, -inf, std::nan(""), 0.0, -0.0, 5.0}, {1, 6}).to(kFloat32).to(d);
                 const Tensor divisors = rt::tensor({0.0, -0.0, 2.5, -2.5, inf, -inf}).to(kFloat32).to(d);
                 return f(rt::cat({in[0], dividends}, 0), divisors);
               })});
    // Integers: every sign combination, in int64, int32 and uint8 (wrapped scalars narrowed to it).
    check.run({.op = op.name, .variant = std::string(op.variant) + " int64",
               .inputs = {randint_t(-50, 50, {6, 8}), randint_t(1, 9, {8}) * (randint_t(0, 2, {8}) * 2 - 1)},
               .tol = Tol::Exact, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = std::string(op.variant) + " int32 python int",
               .inputs = {randint_t(-1000, 1000, {40}, kInt32)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], rt::scalar_to_tensor(-7)); })});
    check.run({.op = op.name, .variant = std::string(op.variant) + " python int lhs",
               .inputs = {randint_t(1, 20, {30}) * (randint_t(0, 2, {30}) * 2 - 1)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(rt::scalar_to_tensor(17), in[0]); })});
    check.run({.op = op.name, .variant = std::string(op.variant) + " uint8 python int",
               .inputs = {randint_t(0, 256, {50}, kUInt8)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], rt::scalar_to_tensor(-3)); })});
    check.run({.op = op.name, .variant = std::string(op.variant) + " int64 float32",
               .inputs = {randint_t(-20, 20, {5, 4}), operand({4}, kFloat32, true)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = std::string(op.variant) + " INT64_MIN by -1 wraps",
               .inputs = {rt::tensor({std::numeric_limits<int64_t>::min(), int64_t(-7), int64_t(7)})},
               .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], rt::scalar_to_tensor(-1)); })});
  }
  check.run({.op = "remainder", .variant = "python float lhs", .inputs = {operand({5, 3}, kFloat16, true)},
             .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::remainder(Scalar(5.5), in[0]); })});
  check.run({.op = "remainder", .variant = "transposed",
             .inputs = {randn_t({5, 4}) * 3, operand({4, 5}, kFloat32, true)}, .grad = {true, true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return in[0].t() % in[1]; })});
  check.run({.op = "remainder_", .inputs = {randn_t({6, 4}, kFloat16) * 5, operand({4}, kFloat32, true)},
             .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.remainder_(in[1]); })});
  check.run({.op = "floor_divide_", .variant = "int32 by int64",
             .inputs = {randint_t(-99, 99, {6, 4}, kInt32), randint_t(1, 5, {4})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.floor_divide_(in[1]); })});
  check.run({.op = "fmod_", .variant = "python float", .inputs = {randn_t({6, 4}) * 5},
             .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return a.fmod_(1.5); })});
  // Integer division by zero throws before anything is written, on either device.
  for (bool number : {false, true})
    check.run({.op = "floor_divide_", .variant = number ? "by python int 0" : "by an int tensor holding 0",
               .inputs = {randint_t(-9, 9, {3, 4}), rt::tensor({int64_t(3), int64_t(0), int64_t(2), int64_t(1)})},
               .tol = Tol::Exact,
               .fn = one([number](const TensorList& in, Device) {
                 Tensor a = in[0];
                 try {
                   a.floor_divide_(number ? rt::scalar_to_tensor(0) : in[1]);
                 } catch (const ZeroDivisionError&) {
                   return a;
                 }
                 return a * 0 - 12345;
               })});
}

void optimizer_updates(OpCheck& check) {
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
    check.run({.op = "addcmul_", .inputs = {randn_t({7, 5}, dt), randn_t({7, 5}, dt), randn_t({5}, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return rt::addcmul_(a, in[1], in[2], 0.1); })});
    check.run({.op = "addcdiv_", .inputs = {randn_t({7, 5}, dt), randn_t({7, 5}, dt), uniform_t({7, 5}, 0.5, 2, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return rt::addcdiv_(a, in[1], in[2], -0.01); })});
    check.run({.op = "lerp_", .inputs = {randn_t({7, 5}, dt), randn_t({7, 5}, dt)},
               .fn = one([](const TensorList& in, Device) { Tensor a = in[0]; return rt::lerp_(a, in[1], 0.1); })});
  }
}

}  // namespace

void add_arith_cases(OpCheck& check) {
  broadcasting(check);
  promotion(check);
  scalars(check);
  inplace(check);
  rounding_division(check);
  optimizer_updates(check);
}

}  // namespace rt::op_check
