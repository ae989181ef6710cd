// rt::linear_pointwise (rt/ops/linear_pointwise.h) against linear() and then the activation op:
// values and gradients to rounding, the same autograd nodes, the bias taken by the activation's op
// where the fused path ran, the unfused ops for other dtypes; and nn::Sequential calling it for a
// Linear and an activation while rt::backends::cpu::fuse_linear_activation() is on, each op in its
// module's scope.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "testing.h"

using rt::LinearActivation;
using rt::Tensor;
using rt::testing::random;
using rt::testing::require_close;

namespace {

Tensor unfused(LinearActivation a, const Tensor& y) {
  switch (a) {
    case LinearActivation::Relu: return rt::relu(y);
    case LinearActivation::Gelu: return rt::gelu(y, "none");
    case LinearActivation::GeluTanh: return rt::gelu(y, "tanh");
    case LinearActivation::Silu: return rt::silu(y);
    case LinearActivation::Sigmoid: return rt::sigmoid(y);
    case LinearActivation::Tanh: return rt::tanh(y);
  }
  return y;
}

// The ops that ran: name, module, number of inputs.
struct OpLog : rt::OpObserver {
  struct Op {
    std::string name, module;
    size_t inputs;
  };
  std::vector<Op> ops;
  void on_op_end(const rt::OpEvent& e) override { ops.push_back({e.name, e.module, e.inputs.size()}); }
  // How many `name` ops took two inputs: the activation with the bias it adds (fused).
  int with_bias(const std::string& name) const {
    int n = 0;
    for (const auto& op : ops) n += op.name == name && op.inputs == 2;
    return n;
  }
};

std::vector<std::string> graph_names(const Tensor& t) {
  std::vector<std::string> names;
  const rt::autograd::Node* n = t.grad_fn().get();
  while (n) {
    names.push_back(n->name());
    const rt::autograd::Node* next = nullptr;
    for (const auto& e : n->next_edges())
      if (e.function && e.function->name() != "AccumulateGrad") next = e.function.get();
    n = next;
  }
  return names;
}

struct Inputs {
  Tensor x, w, b;
};
Inputs inputs(rt::ScalarType dt, uint64_t seed) {
  return {random({3, 7, 5}, dt, -2, 2, seed).requires_grad_(), random({6, 5}, dt, -1, 1, seed + 1).requires_grad_(),
          random({6}, dt, -1, 1, seed + 2).requires_grad_()};
}

}  // namespace

TEST_CASE("linear_pointwise matches linear and the activation, forward and backward", "[linear_pointwise]") {
  const std::pair<LinearActivation, const char*> cases[] = {
      {LinearActivation::Relu, "relu"},       {LinearActivation::Gelu, "gelu"}, {LinearActivation::GeluTanh, "gelu"},
      {LinearActivation::Silu, "silu"},       {LinearActivation::Sigmoid, "sigmoid"},
      {LinearActivation::Tanh, "tanh"}};
  for (const auto& [act, name] : cases) {
    for (bool with_bias : {true, false}) {
      INFO(name << (with_bias ? " with bias" : " without bias"));
      Inputs f = inputs(rt::kFloat32, 11), u = inputs(rt::kFloat32, 11);
      if (!with_bias) f.b = u.b = Tensor();
      OpLog log;
      rt::add_op_observer(&log);
      Tensor y = rt::linear_pointwise(f.x, f.w, f.b, act);
      rt::remove_op_observer(&log);
      Tensor ref = unfused(act, rt::linear(u.x, u.w, u.b));
      require_close(y, ref, 1e-5, 1e-6);
      CHECK(log.with_bias(name) == (with_bias ? 1 : 0));  // the activation's op added the bias
      CHECK(graph_names(y) == graph_names(ref));
      const Tensor g = random(y.sizes(), rt::kFloat32, -1, 1, 5);
      y.backward(g);
      ref.backward(g);
      require_close(f.x.grad(), u.x.grad(), 1e-4, 1e-5);
      require_close(f.w.grad(), u.w.grad(), 1e-4, 1e-5);
      if (with_bias) require_close(f.b.grad(), u.b.grad(), 1e-4, 1e-5);
    }
  }
}

TEST_CASE("linear_pointwise's result is a tensor of its own: in-place use after it is checked", "[linear_pointwise]") {
  Inputs f = inputs(rt::kFloat32, 3);
  Tensor y = rt::linear_pointwise(f.x, f.w, f.b, LinearActivation::Relu);
  CHECK_FALSE(y.impl().is_view);
  y.mul_(2);  // ReluBackward0 saved y: backward must refuse, as after relu()
  CHECK_THROWS_AS(y.sum().backward(), rt::AutogradError);
}

TEST_CASE("linear_pointwise runs the unfused ops for float64 and without grad", "[linear_pointwise]") {
  Inputs f = inputs(rt::kFloat64, 21), u = inputs(rt::kFloat64, 21);
  Tensor y = rt::linear_pointwise(f.x, f.w, f.b, LinearActivation::Silu);
  require_close(y, rt::silu(rt::linear(u.x, u.w, u.b)), 1e-12, 1e-12);
  rt::NoGradGuard no_grad;
  Inputs n = inputs(rt::kFloat32, 4);
  Tensor z = rt::linear_pointwise(n.x, n.w, n.b, LinearActivation::Tanh);
  CHECK_FALSE(z.requires_grad());
  require_close(z, rt::tanh(rt::linear(n.x, n.w, n.b)), 1e-5, 1e-6);
}

TEST_CASE("linear_pointwise refuses what linear refuses, with linear's message", "[linear_pointwise]") {
  Inputs f = inputs(rt::kFloat32, 1);
  CHECK_THROWS_WITH(rt::linear_pointwise(f.x, f.w.t(), f.b, LinearActivation::Relu),
                    Catch::Contains("the weight looks transposed"));
  CHECK(rt::linear_activation_from_name("gelu", "tanh") == LinearActivation::GeluTanh);
  CHECK_FALSE(rt::linear_activation_from_name("gelu", "erf").has_value());
  CHECK_FALSE(rt::linear_activation_from_name("softplus").has_value());
}

TEST_CASE("Sequential fuses Linear + activation while the switch is on", "[linear_pointwise]") {
  rt::manual_seed(3);
  auto net = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(5, 8), std::make_shared<rt::nn::GELU>("tanh"),
                                                  std::make_shared<rt::nn::Linear>(8, 3), std::make_shared<rt::nn::ReLU>());
  const Tensor x = random({4, 5}, rt::kFloat32, -1, 1, 9);
  auto run = [&](bool fuse) {
    rt::backends::cpu::set_fuse_linear_activation(fuse);
    OpLog log;
    rt::add_op_observer(&log);
    net->zero_grad();
    Tensor y = (*net)(x);
    rt::remove_op_observer(&log);
    y.sum().backward();
    rt::backends::cpu::set_fuse_linear_activation(true);
    std::vector<std::string> scopes;
    for (const auto& op : log.ops)
      if (op.name == "linear" || op.name == "gelu" || op.name == "relu") scopes.push_back(op.name + "@" + op.module);
    const int fused_pairs = log.with_bias("gelu") + log.with_bias("relu");
    return std::make_tuple(y.detach(), net->parameters()[0].grad().clone(), fused_pairs, scopes);
  };
  const auto [fused, fused_grad, fused_pairs, fused_scopes] = run(true);
  const auto [plain, plain_grad, plain_pairs, plain_scopes] = run(false);
  CHECK(fused_pairs == 2);
  CHECK(plain_pairs == 0);
  CHECK(fused_scopes == std::vector<std::string>{"linear@0", "gelu@1", "linear@2", "relu@3"});
  CHECK(fused_scopes == plain_scopes);
  require_close(fused, plain, 1e-5, 1e-6);
  require_close(fused_grad, plain_grad, 1e-4, 1e-6);
}
