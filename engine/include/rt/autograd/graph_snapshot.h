// rt/autograd/graph_snapshot.h — a plain-data copy of the backward graph behind some tensors,
// for views (the studio's graph panel) and tools that must not hold engine nodes alive.
//
//   auto loss = rt::cross_entropy(model(x), y);
//   rt::autograd::GraphSnapshot g = rt::autograd::snapshot_graph({loss});
//   for (const auto& n : g.nodes)                 // "NllLossBackward0" in module "", ...
//     std::printf("%s %s\n", n.name.c_str(), n.module.c_str());
//
// Contracts
// - Nodes are every Node reachable from the roots' grad_fn through next_edges, each once
//   (roots without a grad_fn, such as leaves, add none), ordered by sequence_nr descending
//   (the order backward runs them, Note in engine.h); AccumulateGrad leaves come last, in
//   breadth-first discovery order (roots in the order given, next_edges in order).
// - `id` is stable for the life of the graph (the node's address), so two snapshots of the
//   same graph (before and during a backward) agree on ids, and the backward debugger
//   (rt/debug/paused_state.h, NodeInfo::id) uses the same ids. Once the graph is freed, a new
//   graph may reuse an id.
// - forward_op and module are what the node recorded: the engine records them only while ops
//   are observed during the forward (an op observer, the profiler, the debugger, anomaly
//   mode); otherwise they are "". AccumulateGrad has neither.
// - An edge goes from the node that consumes a gradient's producer (the later op, `from`) to the
//   node it flows into (`to`), as next_edges do; `shape` is the gradient's shape (the
//   `to` node's output_meta[input_nr].shape).
// - The snapshot holds copies only: it stays valid after the graph is freed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::autograd {

struct GraphNodeInfo {
  uint64_t id = 0;
  std::string name;            // "AddmmBackward0", "AccumulateGrad"
  uint64_t sequence_nr = 0;
  std::string forward_op;      // "linear" ("" for AccumulateGrad)
  std::string module;          // "encoder.layer0.fc1" ("" at top level)
  std::vector<Shape> output_shapes;  // one per forward output
  bool is_leaf = false;        // AccumulateGrad
  Shape leaf_shape;            // AccumulateGrad: the parameter's shape
};

struct GraphEdgeInfo {
  uint64_t from = 0;  // GraphNodeInfo::id
  uint64_t to = 0;
  uint32_t input_nr = 0;
  Shape shape;
};

struct GraphSnapshot {
  std::vector<GraphNodeInfo> nodes;
  std::vector<GraphEdgeInfo> edges;
};

class Node;

GraphSnapshot snapshot_graph(const TensorList& roots);
// The graph below one node (an observer that sees nodes, not tensors: the debugger's first node).
GraphSnapshot snapshot_graph(const Node& root);
// The nodes themselves, in the snapshot's order; valid while the graph lives (a view that needs more
// than the copies, e.g. the leaves' tensors).
std::vector<const Node*> reachable_nodes(const std::vector<const Node*>& roots);

}  // namespace rt::autograd

RT_API_END
