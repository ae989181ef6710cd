// rt/viz/graph_annotations.h — time and memory from a profiling session, per graph node and per
// module cluster, shown on the Graph panel's nodes.
//
//   rt::viz::GraphAnnotations costs(model, session_data);     // rt::prof::SessionData
//   const rt::viz::OpCost& c = costs.op(op_index);            // c.forward_ns, c.backward_ns, c.bytes
//   const rt::viz::OpCost& m = costs.cluster(model.find_cluster("encoder"));   // sums over its ops
//
// Contracts
// - Matching is by sequence number (as PyTorch's profiler links forward ops and backward nodes):
//   backward_ns sums the BackwardNode OpRecords whose sequence_nr is the node's; forward_ns sums the Op
//   records with that sequence_nr, preferring those named like the node's forward_op, and only the
//   outermost of them (the lowest depth), so nested calls are not counted twice. Records without a
//   sequence number (-1) and AccumulateGrad leaves (no forward op) match nothing.
// - bytes: what the forward op allocated — MemoryRecords with bytes > 0 on the forward record's thread
//   inside its [start, end] (memory records carry no sequence number; their time places them).
// - cluster(c) sums op(i) over every op in c and its descendants; cluster(0) is the whole graph.
// - A session that never saw this graph gives all zeros; matched_ops() says how many ops matched.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/prof/events.h"
#include "rt/viz/graph_model.h"

namespace rt::viz {

struct OpCost {
  int64_t forward_ns = 0;
  int64_t backward_ns = 0;
  int64_t bytes = 0;
  uint32_t forward_calls = 0;
  uint32_t backward_calls = 0;
  int64_t total_ns() const { return forward_ns + backward_ns; }
};

class GraphAnnotations {
 public:
  GraphAnnotations(const GraphModel& model, const prof::SessionData& session);

  const OpCost& op(int op) const { return ops_.at(size_t(op)); }
  const OpCost& cluster(int cluster) const { return clusters_.at(size_t(cluster)); }
  // The cost shown on a visible node: its op's, or its collapsed cluster's sum.
  const OpCost& node(const VisibleNode& node) const {
    return node.kind == VisibleKind::Op ? op(node.index) : cluster(node.index);
  }
  size_t matched_ops() const { return matched_; }

 private:
  std::vector<OpCost> ops_;
  std::vector<OpCost> clusters_;
  size_t matched_ = 0;
};

}  // namespace rt::viz
