// rt/viz/graph_search.h — finds ops by name, forward op or module path, for the Graph panel's search box.
//
//   auto hits = rt::viz::search_graph(model, "fc1");          // ops in "encoder.layer0.fc1", ...
//   if (!hits.empty()) {
//     auto r = model.reveal(hits[0].op);                      // expands the clusters hiding it
//     if (!r.expanded) show(r.message);
//   }
//
// Contracts
// - Case-insensitive substring match against the node name ("AddmmBackward0"), its forward op
//   ("linear") and its module path ("encoder.layer0.fc1"); an empty query finds nothing.
// - Hits come in op order (the snapshot's: backward execution order), each op at most once, naming the
//   first field that matched.
#pragma once
#include <string_view>
#include <vector>

#include "rt/viz/graph_model.h"

namespace rt::viz {

struct GraphSearchHit {
  enum class Field : uint8_t { Name, ForwardOp, Module };
  int op = -1;
  Field field = Field::Name;
};

std::vector<GraphSearchHit> search_graph(const GraphModel& model, std::string_view query);

}  // namespace rt::viz
