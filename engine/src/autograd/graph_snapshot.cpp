#include "rt/autograd/graph_snapshot.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

#include "rt/autograd/node.h"

namespace rt::autograd {

std::vector<const Node*> reachable_nodes(const std::vector<const Node*>& roots) {
  std::vector<const Node*> found;  // breadth-first discovery order
  std::unordered_set<const Node*> seen;
  std::deque<const Node*> queue;
  auto visit = [&](const Node* n) {
    if (n && seen.insert(n).second) {
      found.push_back(n);
      queue.push_back(n);
    }
  };
  for (const Node* r : roots) visit(r);
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    for (const auto& e : n->next_edges()) visit(e.function.get());
  }

  std::vector<const Node*> order, leaves;
  for (const Node* n : found) (dynamic_cast<const AccumulateGrad*>(n) ? leaves : order).push_back(n);
  std::stable_sort(order.begin(), order.end(),
                   [](const Node* a, const Node* b) { return a->sequence_nr() > b->sequence_nr(); });
  order.insert(order.end(), leaves.begin(), leaves.end());
  return order;
}

namespace {

GraphSnapshot snapshot_of(const std::vector<const Node*>& order) {
  GraphSnapshot g;
  g.nodes.reserve(order.size());
  for (const Node* n : order) {
    GraphNodeInfo info;
    info.id = reinterpret_cast<uint64_t>(n);
    info.name = n->name();
    info.sequence_nr = n->sequence_nr();
    info.forward_op = n->forward_op();
    info.module = n->forward_module();
    for (const auto& m : n->output_meta()) info.output_shapes.push_back(m.shape);
    if (const auto* acc = dynamic_cast<const AccumulateGrad*>(n)) {
      info.is_leaf = true;
      info.leaf_shape = acc->variable().sizes();
    }
    g.nodes.push_back(std::move(info));
    for (const auto& e : n->next_edges()) {
      if (!e.valid()) continue;
      const auto& metas = e.function->output_meta();
      Shape shape = e.input_nr < metas.size() ? metas[e.input_nr].shape : Shape{};
      g.edges.push_back({reinterpret_cast<uint64_t>(n), reinterpret_cast<uint64_t>(e.function.get()), e.input_nr,
                         std::move(shape)});
    }
  }
  return g;
}

}  // namespace

GraphSnapshot snapshot_graph(const TensorList& roots) {
  std::vector<const Node*> nodes;
  for (const auto& r : roots)
    if (r.defined()) nodes.push_back(r.grad_fn().get());
  return snapshot_of(reachable_nodes(nodes));
}

GraphSnapshot snapshot_graph(const Node& root) { return snapshot_of(reachable_nodes({&root})); }

}  // namespace rt::autograd
