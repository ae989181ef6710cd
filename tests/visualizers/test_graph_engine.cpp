// The graph view model on a real autograd graph: snapshot_graph of a nested model, profiled, laid out.
#include <catch2/catch.hpp>

#include <set>

#include "rt/autograd/graph_snapshot.h"
#include "rt/prof/session.h"
#include "rt/rt.h"
#include "rt/viz/graph_annotations.h"
#include "rt/viz/graph_layouter.h"
#include "testing.h"

using namespace rt;
using namespace rt::viz;

namespace {

struct Net : nn::Module {
  std::shared_ptr<nn::Sequential> encoder;
  std::shared_ptr<nn::Linear> head;
  Net() : Module("Net") {
    encoder = register_module("encoder", std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(6, 8),
                                                                         std::make_shared<nn::ReLU>(),
                                                                         std::make_shared<nn::Linear>(8, 8)));
    head = register_module("head", std::make_shared<nn::Linear>(8, 3));
  }
  Tensor forward(const Tensor& x) override { return (*head)(rt::relu((*encoder)(x))); }
};

}  // namespace

TEST_CASE("a profiled nested model: clusters, layout and annotations from the real engine") {
  manual_seed(0);
  auto net = std::make_shared<Net>();
  prof::SessionOptions options;
  options.profile_memory = true;
  prof::Session session(options);
  session.start();
  Tensor loss = rt::cross_entropy((*net)(testing::random({5, 6}, kFloat32, -1, 1, 3)),
                                  testing::random_int({5}, 0, 3, 4));
  const autograd::GraphSnapshot snapshot = autograd::snapshot_graph({loss});
  loss.backward();
  session.stop();

  GraphModel model(snapshot, {.module_types = module_types_of(*net)});
  REQUIRE_FALSE(model.empty());
  CHECK(model.dangling_edges() == 0);
  CHECK(model.duplicate_nodes() == 0);
  const int fc = model.find_cluster("encoder.0");
  REQUIRE(fc > 0);
  CHECK(model.cluster(model.cluster(fc).parent).path == "encoder");
  CHECK(model.cluster(fc).type == "Linear");

  VisibleGraph g = model.visible_graph();
  std::set<std::string> titles;
  for (const auto& n : g.nodes) titles.insert(n.title);
  CHECK(titles.count("encoder (Sequential) \xC2\xB7 " + std::to_string(model.cluster(model.find_cluster("encoder")).op_count) + " ops"));

  GraphLayouter layouter([](std::string_view s) { return Size{7.0 * double(s.size()), 14.0}; });
  for (size_t c = 0; c < model.cluster_count(); ++c) REQUIRE(model.expand(int(c)).expanded);
  g = model.visible_graph();
  REQUIRE(g.nodes.size() == model.op_count());
  const LayoutResult r = layouter.wait(layouter.request(g));
  INFO(r.error);
  REQUIRE(r.status == LayoutStatus::Ready);
  REQUIRE(r.layout->nodes.size() == g.nodes.size());
  for (size_t i = 0; i < r.layout->nodes.size(); ++i)
    for (size_t j = i + 1; j < r.layout->nodes.size(); ++j) REQUIRE_FALSE(r.layout->nodes[i].overlaps(r.layout->nodes[j]));

  const GraphAnnotations costs(model, session.data());
  size_t interior = 0;
  for (size_t i = 0; i < model.op_count(); ++i) {
    const auto& n = model.op(int(i));
    if (n.is_leaf) continue;
    ++interior;
    INFO(n.name << " in '" << n.module << "' (" << n.forward_op << ")");
    CHECK(costs.op(int(i)).backward_calls == 1);
    CHECK(costs.op(int(i)).forward_calls >= 1);
    if (n.name == "AddmmBackward0" && n.module == "encoder.0") CHECK(costs.op(int(i)).bytes >= 5 * 8 * 4);
  }
  CHECK(costs.matched_ops() == interior);
  const OpCost& enc = costs.cluster(model.find_cluster("encoder"));
  CHECK(enc.backward_ns > 0);
  CHECK(enc.backward_ns <= costs.cluster(0).backward_ns);
}
