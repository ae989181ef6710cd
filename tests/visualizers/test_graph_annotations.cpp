// GraphAnnotations: time and memory per graph node and per module cluster from a profiling session.
#include <catch2/catch.hpp>

#include "rt/viz/graph_annotations.h"
#include "test_graph_fixtures.h"

using namespace rt::viz;
namespace fx = rt::viz::fixtures;
namespace prof = rt::prof;

namespace {

int find(const GraphModel& m, const std::string& name, const std::string& module) {
  for (size_t i = 0; i < m.op_count(); ++i)
    if (m.op(int(i)).name == name && m.op(int(i)).module == module) return int(i);
  FAIL("no op " << name << " in '" << module << "'");
  return -1;
}

struct SessionBuilder {
  prof::SessionData s;
  void op(const std::string& name, int64_t seq, int64_t start, int64_t end, int32_t depth = 0, uint64_t thread = 1,
          prof::OpKind kind = prof::OpKind::Op) {
    prof::OpRecord r;
    r.start_ns = start;
    r.end_ns = end;
    r.thread = thread;
    r.name = s.strings.intern(name);
    r.sequence_nr = seq;
    r.depth = depth;
    r.kind = kind;
    s.ops.push_back(r);
  }
  void backward(const std::string& name, int64_t seq, int64_t start, int64_t end) {
    op(name, seq, start, end, 0, 2, prof::OpKind::BackwardNode);
  }
  void alloc(int64_t time, int64_t bytes, uint64_t thread = 1) {
    prof::MemoryRecord m;
    m.time_ns = time;
    m.thread = thread;
    m.bytes = bytes;
    m.op = s.strings.intern("addmm");
    s.memory.push_back(m);
  }
};

}  // namespace

TEST_CASE("forward time, backward time and memory match nodes by sequence number") {
  GraphModel model(fx::mlp());
  const int fc1 = find(model, "AddmmBackward0", "net.fc1");
  const int relu = find(model, "ReluBackward0", "net.act");
  const int loss = find(model, "NllLossBackward0", "");
  const auto seq = [&](int op) { return int64_t(model.op(op).sequence_nr); };

  SessionBuilder b;
  // fc1's forward: "linear" (outer) calling "addmm" (nested, same sequence number), two allocations inside,
  // one just after on the same thread and one inside on another thread.
  b.op("linear", seq(fc1), 1000, 2000, 0);
  b.op("addmm", seq(fc1), 1100, 1900, 1);
  b.alloc(1200, 4096);
  b.alloc(1950, 512);
  b.alloc(2500, 777);
  b.alloc(1300, 999, /*thread=*/7);
  b.alloc(1400, -4096);  // a free is not an allocation
  // a non-differentiable op that peeked the same sequence number before relu's node existed
  b.op("zeros_like", seq(relu), 2100, 2150, 0);
  b.op("relu", seq(relu), 2200, 2300, 0);
  b.alloc(2250, 100);
  b.op("cat", -1, 2400, 2500, 0);  // no sequence number: matches nothing
  b.backward("ReluBackward0", seq(relu), 5000, 5040);
  b.backward("AddmmBackward0", seq(fc1), 5100, 5400);
  b.backward("NllLossBackward0", seq(loss), 4000, 4010);
  b.backward("AccumulateGrad", -1, 5500, 5510);

  GraphAnnotations a(model, b.s);
  CHECK(a.op(fc1).forward_ns == 1000);
  CHECK(a.op(fc1).forward_calls == 1);
  CHECK(a.op(fc1).bytes == 4096 + 512);
  CHECK(a.op(fc1).backward_ns == 300);
  CHECK(a.op(relu).forward_ns == 100);  // the op named like the node's forward op
  CHECK(a.op(relu).bytes == 100);
  CHECK(a.op(relu).backward_ns == 40);
  CHECK(a.op(loss).backward_ns == 10);
  CHECK(a.op(loss).forward_ns == 0);
  CHECK(a.matched_ops() == 3);

  const OpCost& net = a.cluster(model.find_cluster("net"));
  CHECK(net.forward_ns == 1100);
  CHECK(net.backward_ns == 340);
  CHECK(net.bytes == 4096 + 512 + 100);
  CHECK(net.total_ns() == 1440);
  CHECK(a.cluster(0).backward_ns == 350);
  CHECK(a.cluster(model.find_cluster("net.fc2")).total_ns() == 0);

  const VisibleGraph g = model.visible_graph();
  const VisibleNode& collapsed = g.nodes[size_t(g.op_to_node[size_t(relu)])];
  REQUIRE(collapsed.kind == VisibleKind::Cluster);
  CHECK(a.node(collapsed).bytes == net.bytes);
  CHECK(a.node(g.nodes[size_t(g.op_to_node[size_t(loss)])]).backward_ns == 10);
}

TEST_CASE("repeated runs of a node add up and unnamed forward records fall back to the outermost") {
  GraphModel model(fx::diamond());
  const int exp = find(model, "ExpBackward0", "");
  const int64_t seq = int64_t(model.op(exp).sequence_nr);
  SessionBuilder b;
  b.op("outer_wrapper", seq, 0, 100, 1);
  b.op("inner", seq, 10, 50, 2);
  b.backward("ExpBackward0", seq, 200, 210);
  b.backward("ExpBackward0", seq, 300, 330);
  GraphAnnotations a(model, b.s);
  CHECK(a.op(exp).forward_ns == 100);
  CHECK(a.op(exp).backward_ns == 40);
  CHECK(a.op(exp).backward_calls == 2);
}

TEST_CASE("a session that never saw the graph annotates nothing") {
  GraphModel model(fx::transformer(1, 1));
  SessionBuilder b;
  b.op("linear", 999999, 0, 10);
  b.backward("AddmmBackward0", 999999, 20, 30);
  GraphAnnotations a(model, b.s);
  CHECK(a.matched_ops() == 0);
  CHECK(a.cluster(0).total_ns() == 0);
  GraphModel empty(rt::autograd::GraphSnapshot{});
  GraphAnnotations none(empty, b.s);
  CHECK(none.matched_ops() == 0);
  CHECK(none.cluster(0).bytes == 0);
}
