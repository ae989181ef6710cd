#include "rt/viz/graph_search.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace rt::viz {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

bool contains(std::string_view haystack, const std::string& needle_lower) {
  return lower(haystack).find(needle_lower) != std::string::npos;
}

}  // namespace

std::vector<GraphSearchHit> search_graph(const GraphModel& model, std::string_view query) {
  std::vector<GraphSearchHit> hits;
  if (query.empty()) return hits;
  const std::string q = lower(query);
  for (size_t i = 0; i < model.op_count(); ++i) {
    const auto& n = model.op(int(i));
    if (contains(n.name, q))
      hits.push_back({int(i), GraphSearchHit::Field::Name});
    else if (contains(n.forward_op, q))
      hits.push_back({int(i), GraphSearchHit::Field::ForwardOp});
    else if (contains(n.module, q))
      hits.push_back({int(i), GraphSearchHit::Field::Module});
  }
  return hits;
}

}  // namespace rt::viz
