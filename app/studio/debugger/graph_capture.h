// debugger/graph_capture.h — the backward graph below one engine node, as a GraphSnapshot, and the
// parameters (AccumulateGrad leaves) it ends in, named after the module that uses them.
//
//   // inside an AutogradObserver, on the backward thread, before the first node runs:
//   rt::studio::CapturedGraph g = rt::studio::capture_graph(*event.node);
//   g.snapshot.nodes.size();            // same ids and order as rt::autograd::snapshot_graph({loss})
//   g.leaves[0].first;                  // "fc1 [16, 8]": the feeding node's module and the leaf's shape
//
// Contracts
// - The snapshot is rt::autograd::snapshot_graph(root) (ids are node addresses, nodes ordered by
//   sequence_nr descending, AccumulateGrad leaves last in breadth-first order).
// - Leaf names are "<module> <shape>" where <module> is the forward module of the first node in that order
//   that feeds the leaf ("(top) <shape>" at top level); repeated names get " #2", " #3", ...
// - Reads the graph only; call it on the thread that runs the backward (nodes are not locked).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "rt/autograd/graph_snapshot.h"
#include "rt/tensor.h"

namespace rt::autograd {
class Node;
}

namespace rt::studio {

struct CapturedGraph {
  autograd::GraphSnapshot snapshot;
  std::vector<std::pair<std::string, Tensor>> leaves;  // parameters, in snapshot order
};

CapturedGraph capture_graph(const autograd::Node& root);

}  // namespace rt::studio
