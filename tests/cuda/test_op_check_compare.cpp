// The op check's comparison (tests/cuda/op_check/harness.h): what counts as a CUDA-vs-CPU mismatch.
// Runs without a GPU: both sides are CPU tensors here.
#include <catch2/catch.hpp>
#include <cmath>

#include "op_check/harness.h"

using Catch::Matchers::Contains;
using rt::op_check::CaseResult;
using rt::op_check::Tol;

namespace {
CaseResult compare(const rt::Tensor& cpu, const rt::Tensor& other, Tol tol = Tol::Pointwise) {
  CaseResult r;
  rt::op_check::compare_into(r, "output 0", cpu, other, tol);
  return r;
}
}  // namespace

TEST_CASE("op check: equal and nearly equal tensors pass", "[op_check]") {
  const rt::Tensor a = rt::tensor({1.0f, -2.0f, 3.0f, 0.0f});
  CHECK(compare(a, a.clone()).problem.empty());
  const CaseResult r = compare(a, a + 1e-6);  // float32 pointwise: 1e-6 + 1e-5 * |cpu|
  CHECK(r.problem.empty());
  CHECK(r.max_abs > 0);
  CHECK(r.max_rel > 0);
}

TEST_CASE("op check: a difference beyond the bound fails, naming where", "[op_check]") {
  const rt::Tensor a = rt::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  rt::Tensor b = a.clone();
  b.narrow(0, 2, 1).fill_(3.001);
  const CaseResult r = compare(a, b);
  CHECK_THAT(r.problem, Contains("output 0") && Contains("1 of 4 elements differ") && Contains("flat index 2"));
  CHECK(r.max_abs == Approx(0.001).epsilon(1e-3));
  // The same difference is within float16's and bfloat16's bounds.
  CHECK(compare(a.to(rt::kFloat16), b.to(rt::kFloat16)).problem.empty());
  CHECK(compare(a.to(rt::kBFloat16), b.to(rt::kBFloat16)).problem.empty());
}

TEST_CASE("op check: NaN must be in the same places, infinities equal", "[op_check]") {
  const float nan = std::nanf(""), inf = INFINITY;
  CHECK(compare(rt::tensor({1.0f, nan}), rt::tensor({1.0f, nan})).problem.empty());
  CHECK_THAT(compare(rt::tensor({1.0f, 2.0f}), rt::tensor({1.0f, nan})).problem, Contains("differ"));
  CHECK_THAT(compare(rt::tensor({nan, 2.0f}), rt::tensor({1.0f, 2.0f})).problem, Contains("differ"));
  CHECK(compare(rt::tensor({inf, -inf}), rt::tensor({inf, -inf})).problem.empty());
  CHECK_THAT(compare(rt::tensor({inf}), rt::tensor({-inf})).problem, Contains("differ"));
  CHECK_THAT(compare(rt::tensor({inf}), rt::tensor({3e38f})).problem, Contains("differ"));
}

TEST_CASE("op check: exact cases, integers and metadata", "[op_check]") {
  const rt::Tensor a = rt::tensor({1.0f, 2.0f});
  CHECK_THAT(compare(a, a + 1e-7, Tol::Exact).problem, Contains("exact match required"));
  const rt::Tensor i = rt::tensor({int64_t(5), int64_t(6)});
  CHECK_THAT(compare(i, i + 1).problem, Contains("exact match required"));  // integers: exact even when pointwise
  CHECK_THAT(compare(a, a.to(rt::kFloat64)).problem, Contains("dtype float64 on cuda, float32 on cpu"));
  CHECK_THAT(compare(a, a.view({2, 1})).problem, Contains("shape [2, 1] on cuda, [2] on cpu"));
  CHECK_THAT(compare(a, rt::Tensor()).problem, Contains("defined on cpu only"));
  CHECK(compare(rt::Tensor(), rt::Tensor()).problem.empty());
  // The first problem is kept; later comparisons still raise the maxima.
  CaseResult r;
  rt::op_check::compare_into(r, "output 0", a, a + 1, Tol::Pointwise);
  rt::op_check::compare_into(r, "grad of input 0", a, a + 2, Tol::Pointwise);
  CHECK_THAT(r.problem, Contains("output 0"));
  CHECK(r.max_abs == Approx(2.0));
}

TEST_CASE("op check: bounds loosen with the tolerance class and narrower dtypes", "[op_check]") {
  using rt::op_check::bound;
  CHECK(bound(Tol::Exact, rt::kFloat32).rtol == 0);
  CHECK(bound(Tol::Pointwise, rt::kInt64).atol == 0);
  CHECK(bound(Tol::Pointwise, rt::kFloat32).rtol < bound(Tol::Reduction, rt::kFloat32).rtol);
  CHECK(bound(Tol::Reduction, rt::kFloat32).rtol <= bound(Tol::Model, rt::kFloat32).rtol);
  CHECK(bound(Tol::Pointwise, rt::kFloat64).rtol < bound(Tol::Pointwise, rt::kFloat32).rtol);
  CHECK(bound(Tol::Pointwise, rt::kFloat32).rtol < bound(Tol::Pointwise, rt::kFloat16).rtol);
  CHECK(bound(Tol::Pointwise, rt::kFloat16).rtol < bound(Tol::Pointwise, rt::kBFloat16).rtol);
}
