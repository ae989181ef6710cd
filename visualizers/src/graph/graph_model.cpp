#include "rt/viz/graph_model.h"

#include <fmt/format.h>

#include <functional>

#include "rt/error.h"

namespace rt::viz {
namespace {

constexpr const char* kEmptyMessage = "no graph: run a backward-able computation";

uint64_t fnv1a(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 1099511628211ull;
  }
  return h;
}

std::string plural_ops(size_t n) { return n == 1 ? "1 op" : fmt::format("{} ops", n); }

}  // namespace

std::string format_output_shapes(const autograd::GraphNodeInfo& node) {
  if (node.is_leaf) return format_shape(node.leaf_shape);
  std::string out;
  for (const auto& s : node.output_shapes) {
    if (!out.empty()) out += ", ";
    out += format_shape(s);
  }
  return out;
}

GraphModel::GraphModel(autograd::GraphSnapshot snapshot, GraphModelOptions options) : options_(std::move(options)) {
  if (options_.max_visible_nodes == 0) throw ValueError("GraphModel: max_visible_nodes must be at least 1");
  for (auto& n : snapshot.nodes) {
    if (op_by_id_.count(n.id)) {
      ++duplicate_nodes_;
      continue;
    }
    op_by_id_.emplace(n.id, int(snapshot_.nodes.size()));
    snapshot_.nodes.push_back(std::move(n));
  }
  for (auto& e : snapshot.edges) {
    auto from = op_by_id_.find(e.from), to = op_by_id_.find(e.to);
    if (from == op_by_id_.end() || to == op_by_id_.end()) {
      ++dangling_edges_;
      continue;
    }
    edges_.emplace_back(to->second, from->second);
    snapshot_.edges.push_back(std::move(e));
  }

  add_cluster("");
  op_cluster_.reserve(snapshot_.nodes.size());
  for (size_t i = 0; i < snapshot_.nodes.size(); ++i) {
    const int c = add_cluster(snapshot_.nodes[i].module);
    op_cluster_.push_back(c);
    clusters_[size_t(c)].ops.push_back(int(i));
    for (int a = c; a >= 0; a = clusters_[size_t(a)].parent) ++clusters_[size_t(a)].op_count;
  }

  // Ids are node addresses, which a later graph may reuse: the fingerprint also covers every label.
  const std::hash<std::string> text;
  uint64_t h = 1469598103934665603ull;
  h = fnv1a(h, snapshot_.nodes.size());
  for (const auto& n : snapshot_.nodes) h = fnv1a(fnv1a(fnv1a(h, n.id), text(n.name)), text(format_output_shapes(n)));
  for (const auto& e : snapshot_.edges) h = fnv1a(fnv1a(h, e.from), e.to);
  for (size_t c = 0; c < clusters_.size(); ++c) h = fnv1a(h, text(cluster_title(int(c))));
  fingerprint_ = fmt::format("{:016x}", h);

  expanded_.assign(clusters_.size(), 0);
  if (empty()) {
    message_ = kEmptyMessage;
    return;
  }
  const auto& root = clusters_[0];
  const size_t top = root.ops.size() + root.children.size();
  if (top > options_.max_visible_nodes) {
    message_ = fmt::format(
        "the graph has {} nodes at the top level, over the limit of {} visible nodes: it stays collapsed", top,
        options_.max_visible_nodes);
  } else {
    expanded_[0] = 1;
  }
}

int GraphModel::add_cluster(const std::string& path) {
  if (auto it = cluster_by_path_.find(path); it != cluster_by_path_.end()) return it->second;
  int parent = -1;
  std::string name = path;
  if (!path.empty()) {
    const auto dot = path.rfind('.');
    parent = add_cluster(dot == std::string::npos ? std::string() : path.substr(0, dot));
    if (dot != std::string::npos) name = path.substr(dot + 1);
  }
  const int index = int(clusters_.size());
  ModuleCluster c;
  c.path = path;
  c.name = std::move(name);
  c.parent = parent;
  c.depth = parent < 0 ? 0 : clusters_[size_t(parent)].depth + 1;
  if (auto t = options_.module_types.find(path); t != options_.module_types.end()) c.type = t->second;
  clusters_.push_back(std::move(c));
  if (parent >= 0) clusters_[size_t(parent)].children.push_back(index);
  cluster_by_path_.emplace(path, index);
  return index;
}

int GraphModel::find_op(uint64_t graph_id) const {
  auto it = op_by_id_.find(graph_id);
  return it == op_by_id_.end() ? -1 : it->second;
}

int GraphModel::find_cluster(std::string_view path) const {
  auto it = cluster_by_path_.find(std::string(path));
  return it == cluster_by_path_.end() ? -1 : it->second;
}

bool GraphModel::is_ancestor(int cluster, int descendant) const {
  for (int c = descendant; c >= 0; c = clusters_.at(size_t(c)).parent)
    if (c == cluster) return true;
  return false;
}

size_t GraphModel::count_visible(const std::vector<char>& expanded) const {
  if (empty()) return 0;
  if (!expanded[0]) return 1;
  size_t n = 0;
  std::vector<char> shown(clusters_.size(), 0);
  for (size_t c = 0; c < clusters_.size(); ++c) {
    const int p = clusters_[c].parent;
    shown[c] = expanded[c] && (p < 0 || shown[size_t(p)]);
    if (!shown[c]) continue;
    n += clusters_[c].ops.size();
    for (int child : clusters_[c].children) n += expanded[size_t(child)] ? 0 : 1;  // expanded: a box, not a node
  }
  return n;
}

ExpandResult GraphModel::try_expansion(std::vector<char> expanded, const std::string& what) {
  const size_t n = count_visible(expanded);
  if (n > options_.max_visible_nodes)
    return {false, fmt::format("expanding {} would show {} nodes, over the limit of {}: collapse other modules first",
                               what, n, options_.max_visible_nodes)};
  expanded_ = std::move(expanded);
  return {true, {}};
}

ExpandResult GraphModel::expand(int cluster) {
  if (cluster < 0 || size_t(cluster) >= clusters_.size())
    throw IndexError(fmt::format("GraphModel::expand: cluster {} out of range [0, {})", cluster, clusters_.size()));
  auto next = expanded_;
  for (int c = cluster; c >= 0; c = clusters_[size_t(c)].parent) next[size_t(c)] = 1;
  const auto& path = clusters_[size_t(cluster)].path;
  return try_expansion(std::move(next), path.empty() ? std::string("the top level") : "'" + path + "'");
}

void GraphModel::collapse(int cluster) {
  if (cluster < 0 || size_t(cluster) >= clusters_.size())
    throw IndexError(fmt::format("GraphModel::collapse: cluster {} out of range [0, {})", cluster, clusters_.size()));
  expanded_[size_t(cluster)] = 0;
}

ExpandResult GraphModel::reveal(int op) {
  if (op < 0 || size_t(op) >= op_count())
    throw IndexError(fmt::format("GraphModel::reveal: op {} out of range [0, {})", op, op_count()));
  auto result = expand(op_cluster_[size_t(op)]);
  if (!result.expanded) result.message = fmt::format("cannot show {}: {}", snapshot_.nodes[size_t(op)].name, result.message);
  return result;
}

std::string GraphModel::cluster_title(int c) const {
  const auto& cl = clusters_[size_t(c)];
  std::string title = cl.path.empty() ? std::string("graph") : cl.name;
  if (!cl.type.empty()) title += " (" + cl.type + ")";
  return title;
}

VisibleGraph GraphModel::visible_graph() const {
  VisibleGraph g;
  if (empty()) return g;
  // outer[c]: the outermost collapsed cluster on c's path (c included), -1 when c is shown expanded.
  std::vector<int> outer(clusters_.size(), -1);
  std::vector<int> visible_cluster(clusters_.size(), -1);
  std::string key = fingerprint_ + ":";
  for (size_t c = 0; c < clusters_.size(); ++c) {
    const int p = clusters_[c].parent;
    if (p >= 0 && outer[size_t(p)] >= 0)
      outer[c] = outer[size_t(p)];
    else
      outer[c] = expanded_[c] ? -1 : int(c);
    if (outer[c] < 0) {
      key += fmt::format("{},", c);
      if (c == 0) continue;
      visible_cluster[c] = int(g.clusters.size());
      g.clusters.push_back({int(c), visible_cluster[size_t(p)], cluster_title(int(c))});
    }
  }
  g.key = std::move(key);

  std::vector<int> cluster_node(clusters_.size(), -1);
  g.op_to_node.assign(op_count(), -1);
  for (size_t i = 0; i < op_count(); ++i) {
    const int c = op_cluster_[i];
    const int t = outer[size_t(c)];
    if (t < 0) {
      g.op_to_node[i] = int(g.nodes.size());
      const auto& n = snapshot_.nodes[i];
      g.nodes.push_back({VisibleKind::Op, int(i), visible_cluster[size_t(c)], n.name, format_output_shapes(n)});
      continue;
    }
    if (cluster_node[size_t(t)] < 0) {
      cluster_node[size_t(t)] = int(g.nodes.size());
      const auto& cl = clusters_[size_t(t)];
      const int parent = cl.parent < 0 ? -1 : visible_cluster[size_t(cl.parent)];
      g.nodes.push_back({VisibleKind::Cluster, t, parent, cluster_title(t) + " \xC2\xB7 " + plural_ops(cl.op_count), {}});
    }
    g.op_to_node[i] = cluster_node[size_t(t)];
  }

  std::unordered_map<uint64_t, int> edge_at;
  for (size_t e = 0; e < edges_.size(); ++e) {
    const int s = g.op_to_node[size_t(edges_[e].first)], t = g.op_to_node[size_t(edges_[e].second)];
    if (s == t) continue;
    const uint64_t k = (uint64_t(uint32_t(s)) << 32) | uint32_t(t);
    auto [it, fresh] = edge_at.emplace(k, int(g.edges.size()));
    if (fresh) g.edges.push_back({s, t, 0, snapshot_.edges[e].shape, {}});
    auto& ve = g.edges[size_t(it->second)];
    ++ve.count;
    ve.snapshot_edges.push_back(e);
  }
  return g;
}

GraphHighlight GraphModel::highlight(uint64_t graph_id, const VisibleGraph& visible) const {
  GraphHighlight h;
  const int op = find_op(graph_id);
  if (op < 0 || size_t(op) >= visible.op_to_node.size()) return h;
  h.node = visible.op_to_node[size_t(op)];
  for (size_t e = 0; e < visible.edges.size(); ++e) {
    for (size_t se : visible.edges[e].snapshot_edges) {
      if (edges_[se].second == op) {
        h.in_edges.push_back(int(e));
        break;
      }
      if (edges_[se].first == op) {
        h.out_edges.push_back(int(e));
        break;
      }
    }
  }
  return h;
}

}  // namespace rt::viz
