#include <catch2/catch.hpp>

#include "testing.h"

TEST_CASE("smoke: add, mul, sum and backward") {
  auto a = rt::tensor({1.f, 2.f, 3.f}).requires_grad_();
  auto b = rt::tensor({4.f, 5.f, 6.f});
  auto y = (a * b + a).sum();
  CHECK(y.item<float>() == Approx(1 * 4 + 2 * 5 + 3 * 6 + 6));
  y.backward();
  rt::testing::require_close(a.grad(), rt::tensor({5.f, 6.f, 7.f}));
}

TEST_CASE("smoke: gradcheck of arithmetic with broadcasting") {
  rt::testing::run_grad_cases({
      {"add_broadcast", {{3, 4}, {4}}, [](const rt::TensorList& x) { return x[0] + x[1]; }},
      {"mul_broadcast", {{3, 1}, {1, 4}}, [](const rt::TensorList& x) { return x[0] * x[1]; }},
      {"div", {{2, 3}, {2, 3}}, [](const rt::TensorList& x) { return x[0] / x[1]; }, 0.5, 2.0},
      {"sum_dim", {{2, 3, 4}}, [](const rt::TensorList& x) { return x[0].sum({1}); }},
      {"transpose_view", {{2, 3}}, [](const rt::TensorList& x) { return x[0].t().reshape({6}) * 2; }},
      {"select_slice", {{4, 5}}, [](const rt::TensorList& x) { return x[0].select(0, 1) + x[0].slice(0, 2, 3).squeeze(0); }},
  });
}
