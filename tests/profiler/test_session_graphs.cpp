// Autograd graphs in profiling sessions: a recording Session captures the graph of each backward and keeps
// the first and the latest (Note [Graphs a session keeps]); the store round-trips them (schema 4) and a
// schema-3 store migrates; several roots merge into one graph; nested and unprofiled backwards add none.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>

#include "rt/prof/session.h"
#include "rt/prof/store.h"
#include "rt/rt.h"
#include "store/sqlite_connection.h"
#include "temp_store_dir.h"
#include "testing.h"

using namespace rt;
using rt::prof::GraphRecord;
using rt::prof::Session;
using rt::prof::SessionData;
using rt::prof::Store;

namespace {

const rt::prof::testing::TempStoreDir scratch("rt_session_graphs_");

std::shared_ptr<nn::Sequential> small_net() {
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(8, 3));
}

prof::SessionOptions options(const std::string& store = "") {
  prof::SessionOptions o;
  o.with_stack = true;
  o.cupti = prof::CuptiMode::Off;
  o.store_path = store;
  o.flush_interval = std::chrono::milliseconds(10);
  return o;
}

// One training step; `batch` changes the graph's shapes.
void train_step(nn::Sequential& net, int64_t batch) {
  Tensor x = testing::random({batch, 4}, kFloat32, -1, 1, uint64_t(batch));
  Tensor loss = rt::mse_loss(net(x), rt::zeros({batch, 3}));
  loss.backward();
}

std::multiset<std::string> names(const autograd::GraphSnapshot& g) {
  std::multiset<std::string> out;
  for (const auto& n : g.nodes) out.insert(n.name);
  return out;
}

void check_same_graph(const autograd::GraphSnapshot& a, const autograd::GraphSnapshot& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i].id == b.nodes[i].id);
    CHECK(a.nodes[i].name == b.nodes[i].name);
    CHECK(a.nodes[i].sequence_nr == b.nodes[i].sequence_nr);
    CHECK(a.nodes[i].forward_op == b.nodes[i].forward_op);
    CHECK(a.nodes[i].module == b.nodes[i].module);
    CHECK(a.nodes[i].output_shapes == b.nodes[i].output_shapes);
    CHECK(a.nodes[i].is_leaf == b.nodes[i].is_leaf);
    CHECK(a.nodes[i].leaf_shape == b.nodes[i].leaf_shape);
  }
  REQUIRE(a.edges.size() == b.edges.size());
  for (size_t i = 0; i < a.edges.size(); ++i) {
    CHECK(a.edges[i].from == b.edges[i].from);
    CHECK(a.edges[i].to == b.edges[i].to);
    CHECK(a.edges[i].input_nr == b.edges[i].input_nr);
    CHECK(a.edges[i].shape == b.edges[i].shape);
  }
}

}  // namespace

TEST_CASE("a session keeps the first and the latest backward's graph, with ops' sequence numbers") {
  auto net = small_net();
  Session s(options());
  s.start();
  train_step(*net, 2);
  s.step();
  train_step(*net, 3);
  s.step();
  train_step(*net, 5);  // the latest: batch 5
  s.stop();
  const SessionData& d = s.data();
  REQUIRE(d.graphs.size() == 2);
  CHECK(s.counts().graphs == 2);
  const GraphRecord& first = d.graphs[0];
  const GraphRecord& latest = d.graphs[1];
  CHECK(first.backward_index == 0);
  CHECK(latest.backward_index == 2);
  CHECK(first.step == 0);
  CHECK(latest.step == 2);
  CHECK(first.time_ns > d.start_ns);
  CHECK(latest.time_ns > first.time_ns);
  CHECK(first.thread == rt::current_thread_id());
  // MseLoss <- Addmm(fc2) <- Relu <- Addmm(fc1), plus the weights' and biases' AccumulateGrad leaves.
  CHECK(names(first.graph) == names(latest.graph));
  CHECK(first.graph.nodes.front().output_shapes == std::vector<Shape>{{}});
  const auto fc1 = std::find_if(latest.graph.nodes.begin(), latest.graph.nodes.end(),
                                [](const auto& n) { return n.module == "0"; });
  REQUIRE(fc1 != latest.graph.nodes.end());
  CHECK(fc1->forward_op == "linear");
  CHECK(fc1->output_shapes == std::vector<Shape>{{5, 8}});
  // Every non-leaf node has its backward node's OpRecord in the session, under the same sequence number.
  for (const auto& n : latest.graph.nodes) {
    if (n.is_leaf) continue;
    const bool recorded = std::any_of(d.ops.begin(), d.ops.end(), [&](const prof::OpRecord& r) {
      return r.kind == prof::OpKind::BackwardNode && r.sequence_nr == int64_t(n.sequence_nr) &&
             d.strings.at(r.name) == n.name;
    });
    CHECK(recorded);
  }
}

TEST_CASE("one backward gives one graph, no backward none, and backwards outside the session add none") {
  auto net = small_net();
  train_step(*net, 2);  // before the session: not captured
  {
    Session s(options());
    s.start();
    s.stop();
    CHECK(s.data().graphs.empty());
  }
  Session s(options());
  s.start();
  train_step(*net, 4);
  const SessionData live = s.snapshot();
  REQUIRE(live.graphs.size() == 1);
  s.stop();
  train_step(*net, 3);  // after stop: not captured
  REQUIRE(s.data().graphs.size() == 1);
  CHECK(s.data().graphs[0].graph.nodes.size() == live.graphs[0].graph.nodes.size());
}

TEST_CASE("snapshot() while recording includes the latest graph so far") {
  auto net = small_net();
  Session s(options());
  s.start();
  train_step(*net, 2);
  train_step(*net, 7);
  const SessionData live = s.snapshot();
  REQUIRE(live.graphs.size() == 2);
  CHECK(live.graphs[1].backward_index == 1);
  s.stop();
}

TEST_CASE("a backward with several roots is captured as one graph, equal to snapshot_graph of the roots") {
  Tensor w = testing::random({3, 3}, kFloat32, -1, 1, 7).requires_grad_();
  Tensor v = testing::random({3}, kFloat32, -1, 1, 8).requires_grad_();
  Session s(options());
  s.start();
  Tensor a = rt::sum(rt::relu(rt::matmul(w, w)));
  Tensor b = rt::sum(rt::mul(v, v));  // shares nothing with a
  const autograd::GraphSnapshot want = autograd::snapshot_graph({a, b});
  autograd::backward({a, b});
  s.stop();
  REQUIRE(s.data().graphs.size() == 1);
  check_same_graph(s.data().graphs[0].graph, want);
}

TEST_CASE("a backward run inside another one's hook is not captured separately") {
  Tensor w = testing::random({4}, kFloat32, -1, 1, 3).requires_grad_();
  Tensor u = testing::random({4}, kFloat32, -1, 1, 4).requires_grad_();
  Session s(options());
  s.start();
  Tensor outer = rt::sum(rt::mul(w, w));
  bool inner_ran = false;
  w.register_hook([&](const Tensor& g) {
    rt::EnableGradGuard grad;  // hooks run under no-grad, as in PyTorch
    rt::sum(rt::mul(u, u)).backward();
    inner_ran = true;
    return g;
  });
  outer.backward();
  s.stop();
  CHECK(inner_ran);
  REQUIRE(s.data().graphs.size() == 1);
  CHECK(names(s.data().graphs[0].graph).count("MulBackward0") == 1);
  CHECK(s.data().graphs[0].graph.nodes.size() == autograd::snapshot_graph({outer}).nodes.size());
}

TEST_CASE("a session streaming into a store writes its graphs and load_session reads them back") {
  const auto db = scratch.fresh("stream.sqlite");
  auto net = small_net();
  Session s(options(db.string()));
  s.start();
  for (int64_t b = 2; b <= 4; ++b) train_step(*net, b);
  s.stop();
  Store store = Store::open(db);
  CHECK(store.schema_version() == prof::kStoreSchemaVersion);
  const SessionData loaded = store.load_session(s.store_session_id());
  REQUIRE(loaded.graphs.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(loaded.graphs[i].backward_index == s.data().graphs[i].backward_index);
    CHECK(loaded.graphs[i].time_ns == s.data().graphs[i].time_ns);
    CHECK(loaded.graphs[i].step == s.data().graphs[i].step);
    CHECK(loaded.graphs[i].thread == s.data().graphs[i].thread);
    check_same_graph(loaded.graphs[i].graph, s.data().graphs[i].graph);
  }
  // Plain SQL sees them too.
  prof::sqlite::Connection raw(db, false, 1000);
  CHECK(raw.query_int("SELECT count(*) FROM AutogradGraphs") == 2);
  CHECK(raw.query_int("SELECT nodeCount FROM AutogradGraphs ORDER BY id DESC LIMIT 1") ==
        int64_t(loaded.graphs[1].graph.nodes.size()));
  CHECK(raw.query_int("SELECT count(*) FROM AutogradGraphNodes n JOIN StringIds s ON s.id = n.nameId "
                      "WHERE s.value = 'AccumulateGrad' AND n.isLeaf = 1") == 8);  // 4 parameters x 2 graphs
}

TEST_CASE("graphs round-trip through save_session and go with delete_session") {
  const auto db = scratch.fresh("roundtrip.sqlite");
  Tensor w = testing::random({2, 3}, kFloat32, -1, 1, 1).requires_grad_();
  Tensor loss = rt::sum(rt::tanh(rt::matmul(w, rt::transpose(w, 0, 1))));
  SessionData d;
  d.name = "by hand";
  d.complete = true;
  d.graphs.push_back({100, 0, 0, 9, autograd::snapshot_graph({loss})});
  d.graphs.push_back({200, 4, 11, 9, autograd::snapshot_graph({loss})});
  d.graphs[1].graph.nodes.front().module = "head";  // a name only the second graph uses
  Store store = Store::open(db);
  const int64_t id = store.save_session(d);
  const int64_t other = store.save_session(d);
  const SessionData back = store.load_session(id);
  REQUIRE(back.graphs.size() == 2);
  CHECK(back.graphs[1].step == 4);
  CHECK(back.graphs[1].backward_index == 11);
  check_same_graph(back.graphs[0].graph, d.graphs[0].graph);
  check_same_graph(back.graphs[1].graph, d.graphs[1].graph);
  store.delete_session(id);
  prof::sqlite::Connection raw(db, false, 1000);
  CHECK(raw.query_int("SELECT count(DISTINCT sessionId) FROM AutogradGraphNodes") == 1);
  CHECK(raw.query_int("SELECT count(*) FROM AutogradGraphEdges WHERE sessionId = " + std::to_string(id)) == 0);
  CHECK(store.load_session(other).graphs.size() == 2);
}

TEST_CASE("schema 3 -> 4: an older store gains the graph tables and its sessions have no graph") {
  const auto db = scratch.fresh("v3.sqlite");
  int64_t old = 0;
  {
    SessionData d;
    d.name = "before graphs";
    d.complete = true;
    old = Store::open(db).save_session(d);
  }
  {  // What a schema-3 build wrote: no graph tables.
    prof::sqlite::Connection raw(db, false, 1000);
    raw.exec("DROP TABLE AutogradGraphs; DROP TABLE AutogradGraphNodes; DROP TABLE AutogradGraphEdges;");
    raw.exec("DROP TABLE Collectives");  // schema 5's
    raw.exec("DROP TABLE GradientHistograms");  // schema 6's
    raw.exec("PRAGMA user_version = 3");
  }
  Store store = Store::open(db);
  CHECK(store.schema_version() == prof::kStoreSchemaVersion);
  CHECK(store.load_session(old).graphs.empty());
  auto net = small_net();
  Session s(options(db.string()));
  s.start();
  train_step(*net, 2);
  s.stop();
  CHECK(store.load_session(s.store_session_id()).graphs.size() == 1);
}

TEST_CASE("a malformed graph row is reported as a corrupt store, naming the file") {
  const auto db = scratch.fresh("corrupt.sqlite");
  Tensor w = testing::random({2}, kFloat32, -1, 1, 1).requires_grad_();
  SessionData d;
  d.complete = true;
  d.graphs.push_back({1, 0, 0, 0, autograd::snapshot_graph({rt::sum(rt::mul(w, w))})});
  Store store = Store::open(db);
  const int64_t id = store.save_session(d);
  {
    prof::sqlite::Connection raw(db, false, 1000);
    raw.exec("UPDATE AutogradGraphEdges SET shape = 'not a shape'");
  }
  REQUIRE_THROWS_WITH(store.load_session(id), Catch::Contains("corrupt") && Catch::Contains(db.string()) &&
                                                  Catch::Contains("not a shape"));
}
