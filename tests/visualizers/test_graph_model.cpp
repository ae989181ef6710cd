// GraphModel: module clusters, expansion, visible-graph edges, limits, imperfect input, highlight, search.
#include <catch2/catch.hpp>

#include <map>

#include "rt/viz/graph_model.h"
#include "rt/viz/graph_search.h"
#include "test_graph_fixtures.h"

using namespace rt::viz;
namespace fx = rt::viz::fixtures;

namespace {

int node_for_cluster(const VisibleGraph& g, int cluster) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == VisibleKind::Cluster && g.nodes[i].index == cluster) return int(i);
  return -1;
}

// Checks the collapsing invariant: an edge between visible nodes A and B exists iff some op shown by A
// feeds some op shown by B, and the counts add up to the snapshot edges that cross between them.
void require_edges_match_snapshot(const GraphModel& model, const VisibleGraph& g) {
  std::map<std::pair<int, int>, int> expected;
  for (const auto& e : model.snapshot().edges) {
    const int producer = g.op_to_node.at(size_t(model.find_op(e.to)));
    const int consumer = g.op_to_node.at(size_t(model.find_op(e.from)));
    if (producer != consumer) ++expected[{producer, consumer}];
  }
  std::map<std::pair<int, int>, int> actual;
  for (const auto& e : g.edges) {
    REQUIRE(actual.count({e.source, e.target}) == 0);  // merged: one edge per pair
    actual[{e.source, e.target}] = e.count;
  }
  REQUIRE(actual == expected);
}

}  // namespace

TEST_CASE("clusters come from module path prefixes, parents first") {
  GraphModel model(fx::transformer(2, 2));
  REQUIRE(model.cluster(0).path.empty());
  const int fc1 = model.find_cluster("blocks.1.mlp.fc1");
  REQUIRE(fc1 > 0);
  const auto& c = model.cluster(fc1);
  CHECK(c.name == "fc1");
  CHECK(c.depth == 4);
  CHECK(model.cluster(c.parent).path == "blocks.1.mlp");
  CHECK(c.op_count == 4);  // weight, t, bias, addmm
  for (size_t i = 1; i < model.cluster_count(); ++i) REQUIRE(model.cluster(int(i)).parent < int(i));
  CHECK(model.cluster(0).op_count == model.op_count());
  CHECK(model.find_cluster("blocks.9") == -1);
  CHECK(model.is_ancestor(model.find_cluster("blocks.1"), fc1));
  CHECK_FALSE(model.is_ancestor(model.find_cluster("blocks.0"), fc1));
}

TEST_CASE("default view: top level expanded, modules collapsed into one node each") {
  rt::viz::GraphModelOptions opts;
  opts.module_types = {{"net", "Sequential"}};
  GraphModel model(fx::mlp(), opts);
  const VisibleGraph g = model.visible_graph();
  // top level: input leaf, log_softmax, nll_loss, and the "net" cluster
  REQUIRE(g.nodes.size() == 4);
  REQUIRE(g.clusters.empty());
  const int net = model.find_cluster("net");
  const int n = node_for_cluster(g, net);
  REQUIRE(n >= 0);
  CHECK(g.nodes[size_t(n)].title == "net (Sequential) \xC2\xB7 9 ops");
  CHECK(g.nodes[size_t(n)].parent == -1);
  require_edges_match_snapshot(model, g);
  CHECK(model.visible_node_count() == g.nodes.size());
  CHECK(model.message().empty());
}

TEST_CASE("expanding and collapsing keep edge connectivity") {
  GraphModel model(fx::transformer(4, 5));
  REQUIRE(model.op_count() >= 300);
  require_edges_match_snapshot(model, model.visible_graph());

  const int attn = model.find_cluster("blocks.2.attn");
  REQUIRE(model.expand(attn).expanded);  // expands blocks, blocks.2 too
  CHECK(model.expanded(model.find_cluster("blocks.2")));
  VisibleGraph g = model.visible_graph();
  require_edges_match_snapshot(model, g);
  CHECK(node_for_cluster(g, model.find_cluster("blocks.2.attn.heads")) >= 0);
  CHECK(node_for_cluster(g, model.find_cluster("blocks.2.attn.heads.0")) == -1);  // inside "heads"
  CHECK(node_for_cluster(g, model.find_cluster("blocks.1")) >= 0);
  // the expanded clusters form a nesting: blocks > blocks.2 > blocks.2.attn
  REQUIRE(g.clusters.size() == 3);
  CHECK(g.clusters[2].parent == 1);
  CHECK(model.visible_node_count() == g.nodes.size());

  for (size_t c = 0; c < model.cluster_count(); ++c) model.expand(int(c));
  g = model.visible_graph();
  CHECK(g.nodes.size() == model.op_count());
  require_edges_match_snapshot(model, g);
  for (const auto& e : g.edges) CHECK(e.count == 1);

  model.collapse(model.find_cluster("blocks"));
  g = model.visible_graph();
  require_edges_match_snapshot(model, g);
  CHECK(node_for_cluster(g, model.find_cluster("blocks")) >= 0);
  // collapsing remembers the inner expansion
  model.expand(model.find_cluster("blocks"));
  CHECK(model.visible_graph().nodes.size() == model.op_count());
}

TEST_CASE("parallel edges merge with a count and internal edges vanish") {
  fx::SnapshotBuilder b;
  const uint64_t x = b.op("XBackward0", "x", "", {2});
  const uint64_t a = b.op("ABackward0", "a", "m", {2}, {x});
  const uint64_t c = b.op("BBackward0", "b", "m", {2}, {x, a});
  b.op("YBackward0", "y", "", {2}, {a, c});
  GraphModel model(b.build());
  const VisibleGraph g = model.visible_graph();
  REQUIRE(g.nodes.size() == 3);
  const int m = node_for_cluster(g, model.find_cluster("m"));
  int into = 0, out = 0;
  for (const auto& e : g.edges) {
    if (e.target == m) into = e.count;
    if (e.source == m) out = e.count;
    CHECK(e.source != e.target);
  }
  CHECK(into == 2);  // x feeds a and b
  CHECK(out == 2);   // a and b feed y
  CHECK(g.edges.size() == 2);
}

TEST_CASE("keys identify the graph and the effective expansion set") {
  GraphModel model(fx::mlp());
  const std::string k0 = model.visible_graph().key;
  const int net = model.find_cluster("net");
  model.expand(model.find_cluster("net.fc1"));
  const std::string k1 = model.visible_graph().key;
  CHECK(k1 != k0);
  model.collapse(net);  // fc1 stays remembered but is hidden: same structure as the default
  CHECK(model.visible_graph().key == k0);
  model.expand(net);
  CHECK(model.visible_graph().key == k1);
  GraphModel other(fx::diamond());
  CHECK(other.visible_graph().key != k0);
  CHECK(GraphModel(fx::mlp()).visible_graph().key == k0);
  // labels change box sizes, so they are part of the key: module types, and shapes under reused ids
  CHECK(GraphModel(fx::mlp(), {1000, {{"net", "Sequential"}}}).visible_graph().key != k0);
  auto reshaped = fx::mlp();
  reshaped.nodes[0].output_shapes = {{1}};
  CHECK(GraphModel(reshaped).visible_graph().key != k0);
}

TEST_CASE("expanding over the visible-node limit is refused with a message") {
  GraphModelOptions opts;
  opts.max_visible_nodes = 25;  // default 8 nodes; "blocks" shows 11, blocks.0.attn.heads.0 31
  GraphModel model(fx::transformer(4, 3), opts);
  const size_t before = model.visible_node_count();
  const auto before_key = model.visible_graph().key;
  const auto r = model.expand(model.find_cluster("blocks.0.attn.heads.0"));
  REQUIRE_FALSE(r.expanded);
  CHECK_THAT(r.message, Catch::Contains("would show 31 nodes, over the limit of 25"));
  CHECK(model.visible_node_count() == before);
  CHECK(model.visible_graph().key == before_key);
  CHECK(model.expand(model.find_cluster("blocks")).expanded);
}

TEST_CASE("a huge graph stays collapsed with a message") {
  GraphModelOptions opts;
  opts.max_visible_nodes = 50;
  GraphModel model(fx::chain(200), opts);
  CHECK_THAT(model.message(), Catch::Contains("stays collapsed"));
  const VisibleGraph g = model.visible_graph();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].kind == VisibleKind::Cluster);
  CHECK(g.nodes[0].title == "graph \xC2\xB7 201 ops");
  CHECK(g.edges.empty());
  CHECK_FALSE(model.expand(0).expanded);
  CHECK_FALSE(model.reveal(5).expanded);
}

TEST_CASE("empty snapshot gives an empty model that says why") {
  GraphModel model(rt::autograd::GraphSnapshot{});
  CHECK(model.empty());
  CHECK(model.message() == "no graph: run a backward-able computation");
  const VisibleGraph g = model.visible_graph();
  CHECK(g.nodes.empty());
  CHECK(g.edges.empty());
  CHECK(model.visible_node_count() == 0);
}

TEST_CASE("dangling edges and duplicate ids are dropped and counted") {
  auto s = fx::diamond();
  const size_t nodes = s.nodes.size(), edges = s.edges.size();
  s.edges.push_back({0xdead, s.nodes[0].id, 0, {1}});
  s.edges.push_back({s.nodes[0].id, 0xbeef, 0, {1}});
  auto dup = s.nodes[1];
  dup.name = "Impostor";
  s.nodes.push_back(dup);
  GraphModel model(s);
  CHECK(model.dangling_edges() == 2);
  CHECK(model.duplicate_nodes() == 1);
  CHECK(model.op_count() == nodes);
  CHECK(model.snapshot().edges.size() == edges);
  CHECK(model.op(model.find_op(dup.id)).name != "Impostor");
  require_edges_match_snapshot(model, model.visible_graph());
}

TEST_CASE("op labels carry output shapes") {
  GraphModel model(fx::mlp());
  for (size_t c = 0; c < model.cluster_count(); ++c) model.expand(int(c));
  const VisibleGraph g = model.visible_graph();
  bool seen_addmm = false, seen_leaf = false;
  for (const auto& n : g.nodes) {
    REQUIRE(n.kind == VisibleKind::Op);
    const auto& op = model.op(n.index);
    if (op.name == "AddmmBackward0" && op.module == "net.fc1") {
      CHECK(n.subtitle == "[8, 128]");
      seen_addmm = true;
    }
    if (op.is_leaf && op.module == "net.fc2" && op.leaf_shape.size() == 2) {
      CHECK(n.subtitle == "[10, 128]");
      seen_leaf = true;
    }
  }
  CHECK(seen_addmm);
  CHECK(seen_leaf);
}

TEST_CASE("highlight: the debugger's node and its edges, revealed or inside its cluster") {
  GraphModel model(fx::mlp());
  int relu = -1;
  for (size_t i = 0; i < model.op_count(); ++i)
    if (model.op(int(i)).name == "ReluBackward0") relu = int(i);
  REQUIRE(relu >= 0);
  const uint64_t id = model.op(relu).id;

  VisibleGraph g = model.visible_graph();
  GraphHighlight h = model.highlight(id, g);
  CHECK(h.node == node_for_cluster(g, model.find_cluster("net")));
  CHECK(h.in_edges.empty());  // relu's edges are inside "net"
  CHECK(h.out_edges.empty());

  REQUIRE(model.reveal(relu).expanded);
  g = model.visible_graph();
  h = model.highlight(id, g);
  REQUIRE(h.node >= 0);
  CHECK(g.nodes[size_t(h.node)].kind == VisibleKind::Op);
  CHECK(g.nodes[size_t(h.node)].index == relu);
  REQUIRE(h.in_edges.size() == 1);   // from fc1 (collapsed)
  REQUIRE(h.out_edges.size() == 1);  // into fc2 (collapsed)
  CHECK(g.edges[size_t(h.in_edges[0])].target == h.node);
  CHECK(g.edges[size_t(h.in_edges[0])].source == node_for_cluster(g, model.find_cluster("net.fc1")));
  CHECK(g.edges[size_t(h.out_edges[0])].target == node_for_cluster(g, model.find_cluster("net.fc2")));

  CHECK(model.highlight(0x1, g).node == -1);
}

TEST_CASE("search matches names, forward ops and module paths, case-insensitively") {
  GraphModel model(fx::transformer(2, 2));
  auto hits = search_graph(model, "softmaxbackward");
  REQUIRE(hits.size() == 4 + 1);  // one per head, plus the loss's LogSoftmaxBackward0
  for (const auto& h : hits) CHECK(h.field == GraphSearchHit::Field::Name);

  hits = search_graph(model, "GELU");
  REQUIRE(hits.size() == 2);

  hits = search_graph(model, "blocks.1.mlp.fc2");
  REQUIRE(hits.size() == 4);
  for (const auto& h : hits) {
    CHECK(h.field == GraphSearchHit::Field::Module);
    CHECK(model.op(h.op).module == "blocks.1.mlp.fc2");
  }
  hits = search_graph(model, "layer_norm");
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].field == GraphSearchHit::Field::ForwardOp);
  CHECK(search_graph(model, "").empty());
  CHECK(search_graph(model, "no such thing").empty());

  // revealing a hit gives it its own visible node
  const int op = search_graph(model, "blocks.1.attn.heads.1")[0].op;
  REQUIRE(model.reveal(op).expanded);
  const VisibleGraph g = model.visible_graph();
  const int n = g.op_to_node[size_t(op)];
  CHECK(g.nodes[size_t(n)].kind == VisibleKind::Op);
  CHECK(g.nodes[size_t(n)].index == op);
}

TEST_CASE("bad indices throw with context") {
  GraphModel model(fx::diamond());
  CHECK_THROWS_WITH(model.expand(99), Catch::Contains("out of range"));
  CHECK_THROWS_AS(model.reveal(-1), rt::IndexError);
  GraphModelOptions opts;
  opts.max_visible_nodes = 0;
  CHECK_THROWS_AS(GraphModel(fx::diamond(), opts), rt::ValueError);
}
