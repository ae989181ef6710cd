#include "dependency_order.h"

#include <functional>
#include <unordered_map>

namespace rt::plugin {

DependencyOrder order_by_dependencies(const std::vector<DependencyNode>& nodes) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].id, i);

  enum class Mark { None, Visiting, Done, Blocked };
  std::vector<Mark> mark(nodes.size(), Mark::None);
  std::vector<size_t> stack;  // the path being visited, for naming a cycle
  DependencyOrder out;

  // Depth-first, dependencies before dependents. Returns false when `i` is on or behind a cycle.
  std::function<bool(size_t)> visit = [&](size_t i) -> bool {
    if (mark[i] == Mark::Done) return true;
    if (mark[i] == Mark::Blocked) return false;
    if (mark[i] == Mark::Visiting) {
      std::vector<std::string> chain;
      size_t from = stack.size();
      while (from > 0 && stack[from - 1] != i) --from;
      if (from > 0) --from;
      for (size_t k = from; k < stack.size(); ++k) chain.push_back(nodes[stack[k]].id);
      chain.push_back(nodes[i].id);
      out.cycles.push_back(std::move(chain));
      return false;
    }
    mark[i] = Mark::Visiting;
    stack.push_back(i);
    bool ok = true;
    for (const std::string& dep : nodes[i].depends_on) {
      auto it = index.find(dep);
      if (it != index.end() && !visit(it->second)) ok = false;
    }
    stack.pop_back();
    if (!ok) {
      mark[i] = Mark::Blocked;
      out.in_cycle.push_back(i);
      return false;
    }
    mark[i] = Mark::Done;
    out.order.push_back(i);
    return true;
  };
  for (size_t i = 0; i < nodes.size(); ++i) visit(i);
  return out;
}

std::string format_chain(const std::vector<std::string>& chain) {
  std::string s;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (i) s += " -> ";
    s += chain[i];
  }
  return s;
}

}  // namespace rt::plugin
