// Autograd engine: accumulation, retain_graph, grad(), hooks, saved-tensor versions,
// in-place rules, anomaly mode, and the order nodes run in.
#include <catch2/catch.hpp>
#include <cmath>

#include "testing.h"

using namespace rt;

TEST_CASE("gradients accumulate across backward calls, retain_graph is required twice") {
  auto x = tensor({1.0, 2.0}).requires_grad_();
  auto y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  testing::require_close(x.grad(), tensor({4.0, 8.0}));
  try {
    y.backward();
    FAIL("second backward without retain_graph must throw");
  } catch (const AutogradError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("second time") && Catch::Contains("retain_graph"));
  }
}

TEST_CASE("backward of a non-scalar needs an explicit gradient") {
  auto x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  auto y = x * 2;
  CHECK_THROWS_WITH(y.backward(), Catch::Contains("scalar outputs"));
  y.backward(tensor({1.0, 0.0, -1.0}));
  testing::require_close(x.grad(), tensor({2.0, 0.0, -2.0}));
  CHECK_THROWS_AS(y.detach().sum().backward(), AutogradError);
}

TEST_CASE("autograd::grad returns gradients without touching .grad") {
  auto a = tensor({3.0}).requires_grad_();
  auto b = tensor({4.0}).requires_grad_();
  auto c = tensor({5.0}).requires_grad_();
  auto y = (a * b + b).sum();
  auto g = autograd::grad({y}, {a, b}, {}, /*retain_graph=*/true);
  testing::require_close(g[0], tensor({4.0}));
  testing::require_close(g[1], tensor({4.0}));
  CHECK_FALSE(a.grad().defined());
  CHECK_THROWS_WITH(autograd::grad({y}, {c}, {}, true), Catch::Contains("not have been used"));
  auto u = autograd::grad({y}, {c}, {}, true, false, /*allow_unused=*/true);
  CHECK_FALSE(u[0].defined());
  auto mid = a * 2;
  auto z = (mid * mid).sum();
  testing::require_close(autograd::grad({z}, {mid})[0], tensor({12.0}));
  CHECK_THROWS_AS(autograd::grad({z}, {a}, {}, false, /*create_graph=*/true), NotImplementedError);
}

TEST_CASE("no_grad, enable_grad and detach") {
  auto x = ones({2}).requires_grad_();
  {
    NoGradGuard g;
    CHECK_FALSE((x * 2).requires_grad());
    {
      EnableGradGuard e;
      CHECK((x * 2).requires_grad());
    }
  }
  auto d = (x * 2).detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK_THROWS_AS(zeros({2}, kInt64).requires_grad_(), DTypeError);
}

TEST_CASE("tensor hooks on leaves and intermediates, retain_grad, remove_hook") {
  auto x = tensor({1.0, 2.0}).requires_grad_();
  auto h = x.register_hook([](const Tensor& g) { return g * 10; });
  auto mid = x * 3;
  std::vector<double> seen;
  mid.register_hook([&](const Tensor& g) {
    seen = testing::values(g);
    return g + 1;
  });
  mid.retain_grad();
  mid.sum().backward();
  CHECK(seen == std::vector<double>{1.0, 1.0});
  testing::require_close(x.grad(), tensor({60.0, 60.0}));   // (1 + 1) * 3 * 10
  testing::require_close(mid.grad(), tensor({2.0, 2.0}));   // retain_grad sees the hooked gradient
  x.remove_hook(h);
  x.set_grad(Tensor());
  (x * 3).sum().backward();
  testing::require_close(x.grad(), tensor({3.0, 3.0}));
}

TEST_CASE("in-place after save is detected with the node named") {
  auto x = tensor({1.0, 2.0}).requires_grad_();
  auto a = x * 1;
  auto y = a * a;    // saves a
  a.add_(1);         // bumps a's version
  try {
    y.sum().backward();
    FAIL("expected AutogradError");
  } catch (const AutogradError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("modified by an inplace operation") && Catch::Contains("MulBackward0") &&
                      Catch::Contains("version"));
  }
}

TEST_CASE("in-place on a leaf that requires grad is refused, on an intermediate it is differentiable") {
  auto w = ones({3}).requires_grad_();
  CHECK_THROWS_WITH(w.add_(ones({3})), Catch::Contains("leaf Variable"));
  {
    NoGradGuard g;
    w.sub_(ones({3}), 0.5);  // optimizer-style update is fine
  }
  auto x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  auto y = x * 2;
  y.mul_(x);        // y = 2x^2
  y.add_(x);        // y = 2x^2 + x
  y.sum().backward();
  testing::require_close(x.grad(), tensor({5.0, 9.0, 13.0}));
  CHECK(y.grad_fn()->name() == "AddBackward0");
  // As in PyTorch, y.mul_(y) saves y as the other operand and then overwrites it.
  auto z = x * 2;
  z.mul_(z);
  CHECK_THROWS_AS(z.sum().backward(), AutogradError);
}

TEST_CASE("anomaly mode names the forward op and module that produced a NaN/Inf gradient") {
  DetectAnomalyGuard anomaly;
  auto a = tensor({1.0, 2.0}).requires_grad_();
  auto b = tensor({0.0, 1.0});
  Tensor y;
  {
    ModuleScope net("net");
    ModuleScope layer("scale");
    y = (a / b).sum();
  }
  try {
    y.backward();
    FAIL("expected AutogradError");
  } catch (const AutogradError& e) {
    std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("DivBackward0") && Catch::Contains("'div'") && Catch::Contains("net.scale"));
  }
}

TEST_CASE("ready queue runs nodes in reverse creation order and observers see each node") {
  struct Recorder : autograd::AutogradObserver {
    std::vector<std::string> before, after;
    size_t started = 0;
    bool ended = false;
    void on_backward_start(size_t n) override { started = n; }
    void before_node(const autograd::NodeEvent& e) override {
      before.push_back(e.node->name());
      REQUIRE(e.grad_outputs != nullptr);
    }
    void after_node(const autograd::NodeEvent& e) override {
      after.push_back(e.node->name());
      REQUIRE(e.grad_inputs != nullptr);
    }
    void on_backward_end() override { ended = true; }
  } rec;
  auto x = tensor({1.0, 2.0}).requires_grad_();
  auto a = x * 2;          // MulBackward0
  auto b = a + 1;          // AddBackward0
  auto c = b.sum();        // SumBackward0
  autograd::add_autograd_observer(&rec);
  c.backward();
  autograd::remove_autograd_observer(&rec);
  CHECK(rec.before == std::vector<std::string>{"SumBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"});
  CHECK(rec.after == rec.before);
  CHECK(rec.started == 4);
  CHECK(rec.ended);
  CHECK(c.grad_fn()->sequence_nr() > b.grad_fn()->sequence_nr());
}

TEST_CASE("diamond graphs sum gradients in the input buffer before a node runs") {
  auto x = tensor({2.0}).requires_grad_();
  auto a = x * 3;
  auto y = (a * a + a).sum();  // dy/dx = (2a + 1) * 3 = 39
  y.backward();
  testing::require_close(x.grad(), tensor({39.0}));
}

TEST_CASE("node pre and post hooks see gradients") {
  auto x = tensor({1.0, 2.0}).requires_grad_();
  auto y = x * 2;
  size_t pre = 0, post = 0;
  y.grad_fn()->add_pre_hook([&](const autograd::Node&, TensorList& g) { pre = g.size(); });
  y.grad_fn()->add_post_hook([&](const autograd::Node&, const TensorList& in, const TensorList&) { post = in.size(); });
  y.sum().backward();
  CHECK(pre == 1);
  CHECK(post == 2);
}

TEST_CASE("post-accumulate hooks run after .grad is updated") {
  auto w = ones({2}).requires_grad_();
  auto acc = std::dynamic_pointer_cast<autograd::AccumulateGrad>(autograd::gradient_edge(w).function);
  REQUIRE(acc);
  double seen = 0;
  acc->add_post_accumulate_hook([&](const Tensor& leaf) { seen = leaf.grad().sum().item<double>(); });
  (w * 5).sum().backward();
  CHECK(seen == 10.0);
}
