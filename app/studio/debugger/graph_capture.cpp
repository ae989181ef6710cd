#include "debugger/graph_capture.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "rt/autograd/node.h"
#include "rt/error.h"

namespace rt::studio {

CapturedGraph capture_graph(const autograd::Node& root) {
  using autograd::AccumulateGrad;
  using autograd::Node;
  std::vector<const Node*> found;
  std::unordered_set<const Node*> seen;
  std::deque<const Node*> queue;
  std::unordered_map<const Node*, const Node*> feeder;  // leaf -> first node that feeds it
  auto visit = [&](const Node* n) {
    if (n && seen.insert(n).second) {
      found.push_back(n);
      queue.push_back(n);
    }
  };
  visit(&root);
  while (!queue.empty()) {
    const Node* n = queue.front();
    queue.pop_front();
    for (const auto& e : n->next_edges()) {
      if (e.valid() && dynamic_cast<const AccumulateGrad*>(e.function.get())) feeder.emplace(e.function.get(), n);
      visit(e.function.get());
    }
  }
  std::vector<const Node*> order, leaves;
  for (const Node* n : found) (dynamic_cast<const AccumulateGrad*>(n) ? leaves : order).push_back(n);
  std::stable_sort(order.begin(), order.end(), [](const Node* a, const Node* b) { return a->sequence_nr() > b->sequence_nr(); });
  order.insert(order.end(), leaves.begin(), leaves.end());

  CapturedGraph out;
  std::unordered_map<std::string, int> name_uses;
  out.snapshot.nodes.reserve(order.size());
  for (const Node* n : order) {
    autograd::GraphNodeInfo info;
    info.id = reinterpret_cast<uint64_t>(n);
    info.name = n->name();
    info.sequence_nr = n->sequence_nr();
    info.forward_op = n->forward_op();
    info.module = n->forward_module();
    for (const auto& m : n->output_meta()) info.output_shapes.push_back(m.shape);
    if (const auto* acc = dynamic_cast<const AccumulateGrad*>(n)) {
      info.is_leaf = true;
      const Tensor v = acc->variable();
      if (v.defined()) {
        info.leaf_shape = v.sizes();
        auto f = feeder.find(n);
        const std::string module = f != feeder.end() && !f->second->forward_module().empty() ? f->second->forward_module() : "(top)";
        std::string name = module + " " + format_shape(v.sizes());
        if (const int uses = ++name_uses[name]; uses > 1) name += " #" + std::to_string(uses);
        out.leaves.emplace_back(std::move(name), v);
      }
    }
    out.snapshot.nodes.push_back(std::move(info));
    for (const auto& e : n->next_edges()) {
      if (!e.valid()) continue;
      const auto& metas = e.function->output_meta();
      Shape shape = e.input_nr < metas.size() ? metas[e.input_nr].shape : Shape{};
      out.snapshot.edges.push_back({reinterpret_cast<uint64_t>(n), reinterpret_cast<uint64_t>(e.function.get()), e.input_nr,
                                    std::move(shape)});
    }
  }
  return out;
}

}  // namespace rt::studio
