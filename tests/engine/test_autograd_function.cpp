// rt::autograd::Function (rt/autograd/function.h): custom ops in C++ with libtorch's API — gradients
// through forward/backward, non-tensor arguments, needs_input_grad, saved tensors and saved_data,
// mark_dirty, mark_non_differentiable, set_materialize_grads, and torch's errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "testing.h"

using namespace rt;
using rt::autograd::AutogradContext;
using rt::testing::random;
using rt::testing::require_close;

namespace {

namespace custom {  // the node is named without namespaces
struct ScaledTanh : autograd::Function<ScaledTanh> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double scale) {
    CHECK_FALSE(GradMode::is_enabled());
    Tensor y = rt::tanh(x);
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = scale;
    return y * scale;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    const Tensor y = ctx->get_saved_variables()[0];
    const double scale = std::get<double>(ctx->saved_data["scale"]);
    return {g[0] * scale * (1.0 - y * y), Tensor()};
  }
};
}  // namespace custom

struct Linear : autograd::Function<Linear> {
  static inline std::vector<bool> seen;
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    seen = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    ctx->save_for_backward({x, w});
    return rt::matmul(x, w.t()) + b;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    const TensorList s = ctx->get_saved_variables();
    return {ctx->needs_input_grad(0) ? rt::matmul(g[0], s[1]) : Tensor(),
            ctx->needs_input_grad(1) ? rt::matmul(g[0].t(), s[0]) : Tensor(), rt::sum(g[0], {0})};
  }
};

struct Split : autograd::Function<Split> {
  static inline bool second_defined = false;
  static TensorList forward(AutogradContext* ctx, const Tensor& x, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {x * 2.0, x * 3.0};
  }
  static TensorList backward(AutogradContext*, TensorList g) {
    second_defined = g[1].defined();
    return {g[0] * 2.0, Tensor()};
  }
};

struct RowMax : autograd::Function<RowMax> {
  static TensorList forward(AutogradContext* ctx, const Tensor& x) {
    auto [values, indices] = rt::max(x, 1);
    ctx->mark_non_differentiable({indices});
    ctx->save_for_backward({indices});
    ctx->saved_data["columns"] = x.size(1);
    return {values, indices};
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    const Tensor indices = ctx->get_saved_variables()[0];
    const int64_t columns = std::get<int64_t>(ctx->saved_data["columns"]);
    return {rt::one_hot(indices, columns).to(kFloat32) * g[0].unsqueeze(1)};
  }
};

struct DoubleInPlace : autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return x;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 2.0}; }
};

struct Identity : autograd::Function<Identity> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 10.0}; }
};

struct WrongCount : autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, const Tensor& x, double) { return x * 1.0; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0]}; }
};

struct GradForNumber : autograd::Function<GradForNumber> {
  static Tensor forward(AutogradContext*, const Tensor& x, double) { return x * 1.0; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0], g[0]}; }
};

}  // namespace

TEST_CASE("a C++ custom function's gradient is its backward's, named after the struct") {
  Tensor x = random({3, 4}, kFloat32, -2, 2, 1).requires_grad_(true);
  Tensor out = custom::ScaledTanh::apply(x, 2.5);
  REQUIRE(out.grad_fn());
  CHECK(out.grad_fn()->name() == "ScaledTanhBackward");
  CHECK(out.grad_fn()->forward_op() == "ScaledTanh");
  rt::sum(out * out).backward();
  Tensor xd = x.detach().to(kFloat64);
  Tensor y = rt::tanh(xd) * 2.5;
  require_close(x.grad(), (2.0 * y * 2.5 * (1.0 - rt::tanh(xd) * rt::tanh(xd))).to(kFloat32), 1e-5, 1e-6);

  Tensor plain = custom::ScaledTanh::apply(random({2}, kFloat32, -1, 1, 2), 1.0);  // no input needs grad
  CHECK_FALSE(plain.grad_fn());
}

TEST_CASE("needs_input_grad follows the inputs, inputs that need no gradient get none") {
  Tensor x = random({5, 3}, kFloat32, -1, 1, 3);
  Tensor w = random({4, 3}, kFloat32, -1, 1, 4).requires_grad_(true);
  Tensor b = random({4}, kFloat32, -1, 1, 5).requires_grad_(true);
  rt::sum(Linear::apply(x, w, b)).backward();
  CHECK(Linear::seen == std::vector<bool>{false, true, true});
  CHECK_FALSE(x.grad().defined());
  require_close(w.grad(), rt::matmul(rt::ones({4, 5}), x), 1e-5);
  require_close(b.grad(), rt::full({4}, 5.0), 1e-6);
}

TEST_CASE("outputs without a gradient get zeros or undefined, as set_materialize_grads says") {
  for (bool materialize : {true, false}) {
    Tensor x = rt::ones({3}).requires_grad_(true);
    TensorList out = Split::apply(x, materialize);
    rt::sum(out[0]).backward();
    CHECK(Split::second_defined == materialize);
    CHECK(x.grad().to_vector<float>() == std::vector<float>{2, 2, 2});
  }
}

TEST_CASE("mark_non_differentiable outputs need no gradient, saved_data keeps other values") {
  Tensor x = tensor({1.0f, 5.0f, 2.0f, 7.0f, 3.0f, 0.0f}, {2, 3}).requires_grad_(true);
  TensorList out = RowMax::apply(x);
  CHECK(out[0].requires_grad());
  CHECK_FALSE(out[1].requires_grad());
  rt::sum(out[0] * tensor({1.0f, 2.0f})).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 1, 0, 2, 0, 0});
}

TEST_CASE("mark_dirty rebases an input modified in place, an input returned unchanged keeps its history") {
  Tensor x = tensor({1.0f, 2.0f}).requires_grad_(true);
  Tensor h = x * 3.0;
  Tensor out = DoubleInPlace::apply(h);
  CHECK(out.is_same(h));
  CHECK(h.grad_fn()->name() == "DoubleInPlaceBackward");
  rt::sum(h).backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{6, 6});
  CHECK_THROWS_WITH(DoubleInPlace::apply(rt::ones({2}).requires_grad_(true)),
                    Catch::Contains("leaf Variable that requires grad has been used in an in-place operation"));

  Tensor leaf = rt::ones({3}).requires_grad_(true);
  Tensor y = Identity::apply(leaf);
  CHECK_FALSE(y.is_same(leaf));
  CHECK(leaf.is_leaf());
  rt::sum(y).backward();
  CHECK(leaf.grad().to_vector<float>() == std::vector<float>{10, 10, 10});
}

TEST_CASE("a saved tensor modified in place, and wrong backward results, raise torch's errors") {
  Tensor input = rt::ones({2, 3}).requires_grad_(true) * 1.0;
  Tensor w = rt::ones({4, 3}).requires_grad_(true);
  Tensor r = Linear::apply(input, w, rt::zeros({4}));
  input.add_(1.0);  // Linear saved it
  CHECK_THROWS_WITH(rt::sum(r).backward(), Catch::Contains("LinearBackward") && Catch::Contains("modified by an inplace"));

  Tensor x = rt::ones({3}).requires_grad_(true);
  CHECK_THROWS_WITH(rt::sum(WrongCount::apply(x, 1.0)).backward(),
                    Catch::Contains("function WrongCountBackward returned an incorrect number of gradients (expected 2, got 1)"));
  CHECK_THROWS_WITH(rt::sum(GradForNumber::apply(x, 1.0)).backward(),
                    Catch::Contains("returned a gradient different than None at position 2"));
}

namespace {
struct Keep : autograd::Function<Keep> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->save_for_backward({x});
    return x * 2.0;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    const Tensor x = ctx->get_saved_variables()[0];  // throws once freed
    return {g[0] * 2.0 + x * 0.0};
  }
};
}  // namespace

TEST_CASE("a backward without retain_graph frees the saved tensors, a function that saved none can run again") {
  Tensor x = rt::ones({2}).requires_grad_(true);
  Tensor y = Identity::apply(x);  // saves nothing
  y.backward(rt::ones({2}));
  y.backward(rt::ones({2}));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{20, 20});

  Tensor z = Keep::apply(x);
  z.backward(rt::ones({2}));
  CHECK_THROWS_WITH(z.backward(rt::ones({2})), Catch::Contains("already been freed"));
}
