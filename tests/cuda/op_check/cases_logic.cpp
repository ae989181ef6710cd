// Comparisons and logical ops (bool results, compared exactly), isnan/isinf, where, masked_fill.
#include <cmath>

#include "cases.h"

namespace rt::op_check {
namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
struct Named {
  const char* name;
  BinaryFn fn;
};
constexpr Named kCompares[] = {{"eq", rt::eq}, {"ne", rt::ne}, {"lt", rt::lt}, {"le", rt::le}, {"gt", rt::gt}, {"ge", rt::ge}};
constexpr Named kLogicals[] = {{"logical_and", rt::logical_and}, {"logical_or", rt::logical_or}, {"logical_xor", rt::logical_xor}};

// Small integers stored as dt, so that equal values (ties) occur.
Tensor ties(const Shape& s, ScalarType dt) { return randint_t(-3, 4, s).to(dt); }

Tensor with_specials(const Shape& s) {
  Tensor x = randn_t(s);
  Tensor nan_mask = mask_t(s, 0.2), inf_mask = mask_t(s, 0.2), neg = mask_t(s, 0.5);
  x = rt::where(nan_mask, rt::full({}, std::nan(""), kFloat32), x);
  return rt::where(inf_mask, rt::where(neg, rt::full({}, -INFINITY, kFloat32), rt::full({}, INFINITY, kFloat32)), x);
}

}  // namespace

void add_logic_cases(OpCheck& check) {
  for (const Named& op : kCompares) {
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kInt64})
      check.run({.op = op.name, .inputs = {ties({4, 6}, dt), ties({6}, dt)}, .tol = Tol::Exact,
                 .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = "float16 vs int32", .inputs = {ties({3, 1, 5}, kFloat16), ties({4, 1}, kInt32)},
               .tol = Tol::Exact, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = "python scalar", .inputs = {ties({9}, kFloat32)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], scalar_to_tensor(1)); })});
    check.run({.op = op.name, .variant = "NaN and inf", .inputs = {with_specials({50}), with_specials({50})}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
  }
  for (const Named& op : kLogicals) {
    check.run({.op = op.name, .inputs = {mask_t({5, 7}, 0.5), mask_t({7}, 0.5)}, .tol = Tol::Exact,
               .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    check.run({.op = op.name, .variant = "float32 int64", .inputs = {ties({5, 7}, kFloat32), ties({5, 7}, kInt64)},
               .tol = Tol::Exact, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
    // Fractions and NaN are nonzero, so true (a float -> integer conversion first would make them false).
    check.run({.op = op.name, .variant = "fractional and NaN floats", .inputs = {with_specials({40}) * 0.1, uniform_t({40}, -0.9, 0.9)},
               .tol = Tol::Exact, .fn = one([f = op.fn](const TensorList& in, Device) { return f(in[0], in[1]); })});
  }
  check.run({.op = "logical_not", .inputs = {mask_t({5, 7}, 0.5)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::logical_not(in[0]); })});
  check.run({.op = "logical_not", .variant = "float16", .inputs = {ties({5, 7}, kFloat16)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::logical_not(in[0]); })});
  check.run({.op = "isnan", .inputs = {with_specials({64})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::isnan(in[0]); })});
  check.run({.op = "isinf", .inputs = {with_specials({64})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::isinf(in[0]); })});

  for (ScalarType dt : kFloatTypes) {
    check.run({.op = "where", .inputs = {mask_t({4, 5}, 0.5), randn_t({4, 5}, dt), randn_t({5}, dt)}, .grad = {false, true, true},
               .fn = one([](const TensorList& in, Device) { return rt::where(in[0], in[1], in[2]); })});
    check.run({.op = "masked_fill", .inputs = {randn_t({3, 4, 5}, dt), mask_t({4, 1}, 0.5)}, .grad = {true, false},
               .fn = one([](const TensorList& in, Device) { return rt::masked_fill(in[0], in[1], -1.5); })});
  }
  check.run({.op = "where", .variant = "mixed dtypes, python scalar", .inputs = {mask_t({6, 1}, 0.5), randn_t({6, 3}, kFloat16)},
             .grad = {false, true}, .fn = one([](const TensorList& in, Device) { return rt::where(in[0], in[1], scalar_to_tensor(0.25)); })});
  check.run({.op = "where", .variant = "int64", .inputs = {mask_t({8}, 0.5), randint_t(0, 9, {8}), randint_t(0, 9, {1})},
             .tol = Tol::Exact, .fn = one([](const TensorList& in, Device) { return rt::where(in[0], in[1], in[2]); })});
  check.run({.op = "masked_fill", .variant = "-inf (attention mask)", .inputs = {randn_t({2, 6, 6}), mask_t({6, 6}, 0.3)},
             .grad = {true, false}, .fn = one([](const TensorList& in, Device) { return rt::masked_fill(in[0], in[1], -INFINITY); })});
  check.run({.op = "masked_fill_", .inputs = {randn_t({5, 6}, kBFloat16), mask_t({5, 6}, 0.5)}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor x = in[0]; return x.masked_fill_(in[1], 3); })});
}

}  // namespace rt::op_check
