// snapshot_graph: structure of a known model, stable ids, and copies that outlive the graph.
#include <catch2/catch.hpp>

#include <map>

#include "rt/autograd/graph_snapshot.h"
#include "rt/rt.h"
#include "testing.h"

using namespace rt;
using autograd::GraphSnapshot;

namespace {

// Observing ops during the forward makes the engine record each node's op and module.
struct ForwardObserved : OpObserver {
  ForwardObserved() { add_op_observer(this); }
  ~ForwardObserved() override { remove_op_observer(this); }
  void on_op_end(const OpEvent&) override {}
};

struct Net : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  Net() : Module("Net") {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, 5));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(5, 2));
  }
  Tensor forward(const Tensor& x) override { return (*fc2)(rt::relu((*fc1)(x))); }
};

}  // namespace

TEST_CASE("snapshot of a two-layer net: nodes, order, modules, leaves and edges") {
  manual_seed(0);
  auto net = std::make_shared<Net>();
  Tensor loss;
  {
    ForwardObserved observed;
    loss = (*net)(testing::random({3, 4}, kFloat32, -1, 1, 1)).sum();
  }
  const GraphSnapshot g = autograd::snapshot_graph({loss});

  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  CHECK(names == std::vector<std::string>{"SumBackward0", "AddmmBackward0", "ReluBackward0", "AddmmBackward0",
                                          "AccumulateGrad", "AccumulateGrad", "AccumulateGrad", "AccumulateGrad"});
  for (size_t i = 1; i < 4; ++i) CHECK(g.nodes[i - 1].sequence_nr > g.nodes[i].sequence_nr);
  CHECK(g.nodes[0].forward_op == "sum");
  CHECK(g.nodes[0].module == "");
  CHECK(g.nodes[1].forward_op == "linear");
  CHECK(g.nodes[1].module == "fc2");
  CHECK(g.nodes[2].forward_op == "relu");
  CHECK(g.nodes[3].module == "fc1");
  CHECK(g.nodes[1].output_shapes == std::vector<Shape>{{3, 2}});

  // Leaves in breadth-first discovery order: fc2.weight, fc2.bias, fc1.weight, fc1.bias.
  const std::vector<Shape> leaf_shapes{{2, 5}, {2}, {5, 4}, {5}};
  for (size_t i = 0; i < 4; ++i) {
    const auto& leaf = g.nodes[4 + i];
    CHECK(leaf.is_leaf);
    CHECK(leaf.leaf_shape == leaf_shapes[i]);
    CHECK(leaf.forward_op.empty());
  }
  CHECK_FALSE(g.nodes[0].is_leaf);

  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].id] = i;
  REQUIRE(index.size() == g.nodes.size());
  std::vector<std::tuple<size_t, size_t, uint32_t>> edges;
  for (const auto& e : g.edges) {
    REQUIRE(index.count(e.from));
    REQUIRE(index.count(e.to));
    edges.emplace_back(index[e.from], index[e.to], e.input_nr);
  }
  // Sum->fc2; fc2->relu, fc2.weight, fc2.bias; relu->fc1; fc1->fc1.weight, fc1.bias (x needs no grad).
  CHECK(edges == std::vector<std::tuple<size_t, size_t, uint32_t>>{
                     {0, 1, 0}, {1, 2, 0}, {1, 4, 0}, {1, 5, 0}, {2, 3, 0}, {3, 6, 0}, {3, 7, 0}});
  CHECK(g.edges[0].shape == Shape{3, 2});
  CHECK(g.edges[2].shape == Shape{2, 5});
  CHECK(g.nodes[0].id == reinterpret_cast<uint64_t>(loss.grad_fn().get()));
}

TEST_CASE("snapshot ids are stable and the snapshot outlives the graph") {
  auto w = rt::ones({3}).requires_grad_();
  Tensor y = (w * 2).exp().sum();
  const GraphSnapshot a = autograd::snapshot_graph({y});
  const GraphSnapshot b = autograd::snapshot_graph({y, y});  // a root twice: each node once
  REQUIRE(a.nodes.size() == 4);
  REQUIRE(b.nodes.size() == a.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i].id == b.nodes[i].id);
    CHECK(a.nodes[i].name == b.nodes[i].name);
  }
  CHECK(a.edges.size() == 3);

  y.backward();  // frees saved tensors
  y = Tensor();  // and drops the graph
  w = Tensor();
  CHECK(a.nodes[0].name == "SumBackward0");
  CHECK(a.nodes[3].name == "AccumulateGrad");
  CHECK(a.nodes[3].leaf_shape == Shape{3});
  CHECK(a.edges[2].shape == Shape{3});

  CHECK(autograd::snapshot_graph({rt::ones({2})}).nodes.empty());  // no grad_fn: nothing reachable
  CHECK(autograd::snapshot_graph({Tensor()}).nodes.empty());
}
