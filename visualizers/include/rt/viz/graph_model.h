// rt/viz/graph_model.h — the Graph panel's view model: the autograd graph behind a tensor, ops grouped
// into clusters by module path, of which the view shows a "visible graph" that depends on which
// clusters are expanded. Plain C++, no Qt/GL; layout lives in graph_layout.h.
//
//   rt::viz::GraphModel model(rt::autograd::snapshot_graph({loss}), {.module_types = rt::viz::module_types_of(net)});
//   if (model.empty()) show(model.message());          // "no graph: run a backward-able computation"
//   auto visible = model.visible_graph();              // top-level modules collapsed: "encoder · 40 ops"
//   int enc = model.find_cluster("encoder");
//   if (auto r = model.expand(enc); !r.expanded) show(r.message);   // refused over the node limit
//   visible = model.visible_graph();                   // encoder's ops and its collapsed submodules
//
// Contracts
// - Clusters: every dotted prefix of every node's module path is a cluster ("encoder",
//   "encoder.layer0", "encoder.layer0.fc1"); cluster 0 is the root (path ""). A node belongs to the
//   cluster of its full module path. Cluster indices list parents before children.
// - A cluster is shown expanded (its members visible, drawn as a box around them) when it and all its
//   ancestors are expanded, and as one node when it is the outermost collapsed cluster on its path;
//   otherwise it is hidden inside a collapsed ancestor. Collapsing a cluster remembers the expansion of
//   its descendants, which reappear when it is expanded again.
// - Default: the root expanded, every other cluster collapsed. When the root alone already shows more
//   than `max_visible_nodes` members, the root itself stays collapsed (one node) with a message.
// - expand()/reveal() never produce a visible graph over `max_visible_nodes`; they refuse, change
//   nothing, and return a message the view shows.
// - Visible edges run in data-flow (forward) direction: `source` produced the tensor, `target`
//   consumed it (the snapshot's edge goes the other way, to -> from). Parallel edges between two
//   visible nodes merge into one with `count`; edges inside one collapsed cluster vanish. An edge
//   between two visible nodes exists iff some op shown by the first feeds some op shown by the second.
// - Imperfect input: the model keeps a cleaned copy of the snapshot — a repeated node id keeps its first
//   node, edges naming unknown ids are dropped — and counts both (duplicate_nodes(), dangling_edges()).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rt/autograd/graph_snapshot.h"

namespace rt::nn {
class Module;
}

namespace rt::viz {

struct GraphModelOptions {
  size_t max_visible_nodes = 1000;
  // Optional module types by path ("encoder.layer0.fc1" -> "Linear"), shown in collapsed labels.
  std::unordered_map<std::string, std::string> module_types;
};

struct ModuleCluster {
  std::string path;            // "encoder.layer0.fc1"; "" for the root
  std::string name;            // "fc1"; "" for the root
  std::string type;            // "Linear" when known
  int parent = -1;             // cluster index; -1 for the root
  int depth = 0;               // root 0, "encoder" 1, ...
  std::vector<int> children;   // child clusters
  std::vector<int> ops;        // ops whose module path is exactly `path`
  size_t op_count = 0;         // ops in this cluster and all its descendants
};

enum class VisibleKind : uint8_t { Op, Cluster };

struct VisibleNode {
  VisibleKind kind = VisibleKind::Op;
  int index = 0;              // op index (GraphModel::op) or cluster index (GraphModel::cluster)
  int parent = -1;            // index into VisibleGraph::clusters of the enclosing expanded cluster; -1 at top
  std::string title;          // "AddmmBackward0" or "fc1 (Linear) · 3 ops"
  std::string subtitle;       // output shapes "[64, 128]"; "" for clusters
};

struct VisibleEdge {
  int source = 0;             // VisibleGraph::nodes index: the producer
  int target = 0;             // the consumer
  int count = 0;              // snapshot edges merged into this one
  Shape shape;                // the first merged tensor's shape
  std::vector<size_t> snapshot_edges;  // indices into GraphModel::snapshot().edges
};

struct VisibleCluster {
  int cluster = 0;            // GraphModel cluster index
  int parent = -1;            // VisibleGraph::clusters index; -1 at top
  std::string title;          // "fc1 (Linear)"
};

struct VisibleGraph {
  std::string key;            // fingerprint of the graph and its labels + the shown expansion set:
                              // equal keys mean the same nodes, edges, clusters and labels
  std::vector<VisibleNode> nodes;
  std::vector<VisibleEdge> edges;
  std::vector<VisibleCluster> clusters;  // expanded clusters except the root, parents first
  std::vector<int> op_to_node;           // per op: the visible node showing it (itself or its collapsed cluster)
};

struct ExpandResult {
  bool expanded = false;      // true also when nothing had to change
  std::string message;        // why it was refused
};

// The node the debugger is on, as shown in one visible graph.
struct GraphHighlight {
  int node = -1;                 // visible node (the op, or the collapsed cluster hiding it); -1 if unknown id
  std::vector<int> in_edges;     // visible edges into it
  std::vector<int> out_edges;    // visible edges out of it
};

class GraphModel {
 public:
  explicit GraphModel(autograd::GraphSnapshot snapshot, GraphModelOptions options = {});

  bool empty() const { return snapshot_.nodes.empty(); }
  // A line for the view: why the graph is empty, or why it stays collapsed; "" when nothing to say.
  const std::string& message() const { return message_; }
  const autograd::GraphSnapshot& snapshot() const { return snapshot_; }
  size_t dangling_edges() const { return dangling_edges_; }
  size_t duplicate_nodes() const { return duplicate_nodes_; }
  size_t max_visible_nodes() const { return options_.max_visible_nodes; }

  // Ops are the cleaned snapshot's nodes, same indices.
  size_t op_count() const { return snapshot_.nodes.size(); }
  const autograd::GraphNodeInfo& op(int index) const { return snapshot_.nodes.at(size_t(index)); }
  int op_cluster(int op) const { return op_cluster_.at(size_t(op)); }
  int find_op(uint64_t graph_id) const;             // -1 when unknown
  size_t cluster_count() const { return clusters_.size(); }
  const ModuleCluster& cluster(int index) const { return clusters_.at(size_t(index)); }
  int find_cluster(std::string_view path) const;    // -1 when unknown
  bool is_ancestor(int cluster, int descendant) const;  // true also when equal

  bool expanded(int cluster) const { return expanded_.at(size_t(cluster)) != 0; }
  ExpandResult expand(int cluster);
  void collapse(int cluster);
  // Expands every collapsed cluster on the op's path so the op is its own visible node.
  ExpandResult reveal(int op);
  // Where the node with that graph id shows in `visible`. Call reveal(find_op(id)) first to give it its
  // own node; when that was refused, the collapsed cluster hiding it is highlighted.
  GraphHighlight highlight(uint64_t graph_id, const VisibleGraph& visible) const;
  size_t visible_node_count() const { return count_visible(expanded_); }

  VisibleGraph visible_graph() const;

 private:
  int add_cluster(const std::string& path);
  size_t count_visible(const std::vector<char>& expanded) const;
  ExpandResult try_expansion(std::vector<char> expanded, const std::string& what);
  std::string cluster_title(int c) const;

  autograd::GraphSnapshot snapshot_;
  GraphModelOptions options_;
  std::vector<ModuleCluster> clusters_;
  std::vector<int> op_cluster_;
  std::vector<char> expanded_;
  std::vector<std::pair<int, int>> edges_;          // per snapshot edge: (producer op, consumer op)
  std::unordered_map<uint64_t, int> op_by_id_;
  std::unordered_map<std::string, int> cluster_by_path_;
  std::string fingerprint_;
  std::string message_;
  size_t dangling_edges_ = 0;
  size_t duplicate_nodes_ = 0;
};

// Module types by path from a model ("fc1" -> "Linear"), for GraphModelOptions::module_types: the paths are
// named_modules() keys, which are the module paths ops record when the model is called as the root.
std::unordered_map<std::string, std::string> module_types_of(nn::Module& model);

// "[64, 128]" per output, joined by ", "; an AccumulateGrad leaf shows its parameter shape.
std::string format_output_shapes(const autograd::GraphNodeInfo& node);

}  // namespace rt::viz
