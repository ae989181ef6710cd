// pow (tensor ^ scalar, tensor ^ tensor), square, clamp (and clamp_), maximum/minimum with ties and NaN.
#include <cmath>
#include <cstdio>
#include <string>

#include "cases.h"

namespace rt::op_check {

namespace {
std::string exponent_name(double e) {  // "x^2", "x^0.5", "x^2.3"
  char buf[32];
  std::snprintf(buf, sizeof buf, "x^%g", e);
  return buf;
}
}  // namespace

void add_pow_clamp_cases(OpCheck& check) {
  // A number exponent is used as given, not rounded to the tensor's dtype (10.3 in bfloat16 is 10.3125:
  // 4-5% off for x in [30, 40], beyond the bfloat16 tolerance).
  check.run({.op = "pow", .variant = "x^10.3 bfloat16 (exponent kept exact)", .inputs = {uniform_t({5, 9}, 30, 40, kBFloat16)},
             .grad = {true}, .fn = one([](const TensorList& in, Device) { return rt::pow(in[0], 10.3); })});
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
    for (double e : {2.0, 3.0, 0.5, -1.5, 2.3})
      check.run({.op = "pow", .variant = exponent_name(e), .inputs = {uniform_t({5, 9}, 0.2, 3, dt)}, .grad = {true},
                 .fn = one([e](const TensorList& in, Device) { return rt::pow(in[0], e); })});
    check.run({.op = "pow", .variant = "x^y", .inputs = {uniform_t({5, 9}, 0.2, 3, dt), uniform_t({9}, -2, 2, dt)}, .grad = {true, true},
               .fn = one([](const TensorList& in, Device) { return rt::pow(in[0], in[1]); })});
    check.run({.op = "square", .inputs = {randn_t({5, 9}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return rt::square(in[0]); })});
    check.run({.op = "clamp", .variant = "[-0.5, 0.7]", .inputs = {randn_t({6, 7}, dt)}, .grad = {true},
               .fn = one([](const TensorList& in, Device) { return rt::clamp(in[0], -0.5, 0.7); })});
    check.run({.op = "maximum", .inputs = {randint_t(-3, 4, {4, 6}).to(dt), randint_t(-3, 4, {6}).to(dt)}, .grad = {true, true},
               .fn = one([](const TensorList& in, Device) { return rt::maximum(in[0], in[1]); })});
    check.run({.op = "minimum", .inputs = {randint_t(-3, 4, {4, 6}).to(dt), randint_t(-3, 4, {4, 1}).to(dt)}, .grad = {true, true},
               .fn = one([](const TensorList& in, Device) { return rt::minimum(in[0], in[1]); })});
  }
  check.run({.op = "pow", .variant = "2^y (number base)", .inputs = {uniform_t({5, 7}, -3, 3)}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::pow(Scalar(2.0), in[0]); })});
  check.run({.op = "pow", .variant = "x^y with zero bases and exponents", .inputs = {randint_t(0, 3, {4, 6}).to(kFloat32), randint_t(0, 3, {6}).to(kFloat32)},
             .grad = {true, true}, .fn = one([](const TensorList& in, Device) { return rt::pow(in[0], in[1]); })});
  check.run({.op = "pow", .variant = "int64 ^ 2", .inputs = {randint_t(-20, 20, {12})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::pow(in[0], 2); })});
  check.run({.op = "pow", .variant = "negative base ^ 0.5 (NaN)", .inputs = {uniform_t({20}, -1, 1)}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::pow(in[0], 0.5); })});
  check.run({.op = "square", .variant = "int32", .inputs = {randint_t(-100, 100, {12}, kInt32)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::square(in[0]); })});
  check.run({.op = "clamp", .variant = "min only", .inputs = {randn_t({30})}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::clamp(in[0], 0.1); })});
  check.run({.op = "clamp", .variant = "max only, transposed", .inputs = {randn_t({5, 6})}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::clamp(in[0].t(), std::nullopt, -0.2); })});
  check.run({.op = "clamp", .variant = "int64", .inputs = {randint_t(-50, 50, {30})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::clamp(in[0], -10, 20); })});
  check.run({.op = "clamp_", .inputs = {randn_t({8, 8}, kFloat16)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor x = in[0]; return x.clamp_(-1, 1); })});
  check.run({.op = "maximum", .variant = "NaN propagates", .inputs = {randn_t({16}), randn_t({16})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) {
               return rt::maximum(rt::where(in[0].gt(scalar_to_tensor(1.0)), scalar_to_tensor(std::nan("")), in[0]), in[1]);
             })});
  check.run({.op = "minimum", .variant = "int64 float32", .inputs = {randint_t(-5, 5, {10}), randn_t({10})}, .grad = {false, true},
             .fn = one([](const TensorList& in, Device) { return rt::minimum(in[0], in[1]); })});
}

}  // namespace rt::op_check
