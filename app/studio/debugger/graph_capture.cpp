#include "debugger/graph_capture.h"

#include <unordered_map>

#include "rt/autograd/node.h"
#include "rt/error.h"

namespace rt::studio {

CapturedGraph capture_graph(const autograd::Node& root) {
  CapturedGraph out;
  out.snapshot = autograd::snapshot_graph(root);
  std::unordered_map<uint64_t, const std::string*> module_of, feeder_module;  // leaf id -> its first feeder's
  for (const autograd::GraphNodeInfo& n : out.snapshot.nodes) module_of.emplace(n.id, &n.module);
  for (const autograd::GraphEdgeInfo& e : out.snapshot.edges)  // edges come in node order
    feeder_module.emplace(e.to, module_of.at(e.from));
  std::unordered_map<std::string, int> name_uses;
  for (const autograd::Node* n : autograd::reachable_nodes({&root})) {
    const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n);
    if (!acc) continue;
    const Tensor v = acc->variable();
    if (!v.defined()) continue;
    const auto f = feeder_module.find(reinterpret_cast<uint64_t>(n));
    const std::string module = f != feeder_module.end() && !f->second->empty() ? *f->second : "(top)";
    std::string name = module + " " + format_shape(v.sizes());
    if (const int uses = ++name_uses[name]; uses > 1) name += " #" + std::to_string(uses);
    out.leaves.emplace_back(std::move(name), v);
  }
  return out;
}

}  // namespace rt::studio
