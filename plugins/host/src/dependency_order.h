// Ordering plugins so that each comes after those it depends on, and naming the cycles that prevent it.
//
//   std::vector<DependencyNode> nodes = {{"a", {"b"}}, {"b", {}}};
//   DependencyOrder o = order_by_dependencies(nodes);   // o.order == {1, 0}
//   // {"a", {"b"}}, {"b", {"a"}}: o.order is empty and o.cycles == {{"a", "b", "a"}}
//
// Dependencies on ids that are not among the nodes are ignored here (the manager reports them first).
// The order is stable: among plugins free to go, the one listed first goes first.
#pragma once
#include <string>
#include <vector>

namespace rt::plugin {

struct DependencyNode {
  std::string id;
  std::vector<std::string> depends_on;
};

struct DependencyOrder {
  std::vector<size_t> order;                     // indexes of the nodes that can be ordered, dependencies first
  std::vector<std::vector<std::string>> cycles;  // each cycle as a chain that returns to its start
  std::vector<size_t> in_cycle;                  // indexes of the nodes on a cycle or depending on one
};

DependencyOrder order_by_dependencies(const std::vector<DependencyNode>& nodes);

// "a -> b -> a"
std::string format_chain(const std::vector<std::string>& chain);

}  // namespace rt::plugin
