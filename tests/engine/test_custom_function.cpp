// Custom backward nodes (rt/autograd/custom_function.h, what rt.autograd.Function records): the
// gradient function runs as given, unused outputs get zeros or undefined gradients as asked, an
// input modified in place is rebased onto the node, and autocast applies inside the function.
#include <catch2/catch.hpp>

#include "testing.h"

using namespace rt;
using rt::autograd::CustomFunctionOptions;
using rt::autograd::record_custom_function;

TEST_CASE("a custom function's gradient is the one it computes (straight-through clamp)") {
  Tensor x = tensor({-3.0f, 0.5f, 2.0f}).requires_grad_(true);
  Tensor y;
  {
    NoGradGuard no_grad;
    y = clamp(x, -1.0, 1.0);
  }
  auto node = record_custom_function("StraightThroughBackward", {x}, {y},
                                     [](const TensorList& g) { return TensorList{g[0] * 2.0}; }, {.forward_name = "ST"});
  CHECK(y.grad_fn() == node);
  CHECK(node->name() == "StraightThroughBackward");
  CHECK(node->forward_op() == "ST");
  sum(y).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 2, 2});
}

TEST_CASE("outputs without a gradient get zeros, or undefined gradients when materialize_grads is off") {
  for (bool materialize : {true, false}) {
    Tensor x = ones({2}).requires_grad_(true);
    Tensor a, b;
    {
      NoGradGuard no_grad;
      a = x * 2.0;
      b = x * 3.0;
    }
    bool second_defined = false;
    record_custom_function(
        "SplitBackward", {x}, {a, b},
        [&](const TensorList& g) {
          second_defined = g[1].defined();
          return TensorList{g[0] * 2.0};
        },
        {.materialize_grads = materialize});
    sum(a).backward();
    CHECK(second_defined == materialize);
    CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 2});
  }
}

TEST_CASE("an input modified in place and returned is rebased onto the node, a leaf that requires grad or a view is refused") {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_(true);
  Tensor h = x * 3.0;
  {
    NoGradGuard no_grad;
    h.mul_(2.0);
  }
  auto node = record_custom_function("DoubleBackward", {h}, {h}, [](const TensorList& g) { return TensorList{g[0] * 2.0}; });
  CHECK(h.grad_fn() == node);
  REQUIRE(node->next_edges().size() == 1);
  CHECK(node->next_edges()[0].function->name() == "MulBackward0");  // the history before the in-place op
  sum(h).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{6, 6});

  Tensor leaf = ones({2}).requires_grad_(true);
  CHECK_THROWS_WITH(record_custom_function("BadBackward", {leaf}, {leaf}, [](const TensorList& g) { return g; }),
                    Catch::Contains("leaf Variable that requires grad has been used in an in-place operation"));
  Tensor view = (x * 1.0).view({2});
  {
    NoGradGuard no_grad;
    view.mul_(2.0);
  }
  CHECK_THROWS_WITH(record_custom_function("ViewBackward", {view}, {view}, [](const TensorList& g) { return g; }),
                    Catch::Contains("in-place modification of a view"));
}

TEST_CASE("an output that already has a history is rebased onto the custom node (torch's behaviour)") {
  Tensor x = ones({2}).requires_grad_(true);
  Tensor y = x * 2.0;  // computed with grad mode on
  auto node = record_custom_function("RebasedBackward", {x}, {y}, [](const TensorList& g) { return TensorList{g[0] * 5.0}; });
  CHECK(y.grad_fn() == node);
  sum(y).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{5, 5});
}

TEST_CASE("a custom function's backward autocasts as the caller's region says, the engine's nodes do not") {
  Tensor a = testing::random({2, 4}, kFloat32, -1, 1, 1).requires_grad_(true);
  Tensor w = testing::random({4, 3}, kFloat32, -1, 1, 2);
  auto run = [&] {
    Tensor y;
    {
      NoGradGuard no_grad;
      y = matmul(a, w);
    }
    ScalarType seen = kFloat64;
    record_custom_function("MatMulBackward", {a}, {y}, [&](const TensorList& g) {
      Tensor ga = matmul(g[0], w.t());
      seen = ga.dtype();
      return TensorList{ga};
    });
    sum(y).backward();
    return seen;
  };
  CHECK(run() == kFloat32);
  amp::AutocastGuard autocast(DeviceType::CPU);
  CHECK(run() == kBFloat16);
  CHECK(a.grad().dtype() == kFloat32);
}
