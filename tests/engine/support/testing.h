// Test support shared by every engine test: random inputs independent of the engine's RNG,
// closeness checks with useful messages, and the table-driven finite-difference gradcheck.
//
//   auto x = rt::testing::random({3, 4}, rt::kFloat64, -1, 1, /*seed=*/1);
//   rt::testing::require_close(rt::exp(x), reference, 1e-12);
//   rt::testing::run_grad_cases({
//     {"exp", {{3, 4}}, [](const rt::TensorList& in) { return rt::exp(in[0]); }},
//   });
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "rt/rt.h"

namespace rt::testing {

// Uniform values in [lo, hi) from a std::mt19937_64 seeded with `seed`.
Tensor random(const Shape& shape, ScalarType dtype = kFloat64, double lo = -1.0, double hi = 1.0, uint64_t seed = 0);
// Integer values in [lo, hi).
Tensor random_int(const Shape& shape, int64_t lo, int64_t hi, uint64_t seed = 0, ScalarType dtype = kInt64);

// All elements as double, row-major.
std::vector<double> values(const Tensor& t);

// Fails the current Catch2 test with the first mismatching index when |a - e| > atol + rtol*|e|
// (NaNs must match NaNs) or when the shapes differ.
void require_close(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-8);

// Builds a tensor from a float64 reference computed elementwise by `f` over `x`'s values.
Tensor map_reference(const Tensor& x, const std::function<double(double)>& f);

struct GradCase {
  std::string name;
  std::vector<Shape> shapes;                        // one per differentiable input (float64)
  std::function<Tensor(const TensorList&)> fn;      // the op under test
  double lo = -1.0, hi = 1.0;                       // input range (keep away from kinks)
  std::vector<Tensor> extra = {};                   // ignored by gradcheck; available to fn via capture
  double atol = 1e-6, rtol = 1e-4;
};

// For each case: float64 inputs, analytic gradient of sum(fn(x) * w) for a random w via
// autograd::grad, compared with central differences (eps 1e-6). Reports the case name,
// input index, element and both values on failure.
void run_grad_cases(const std::vector<GradCase>& cases);

}  // namespace rt::testing
