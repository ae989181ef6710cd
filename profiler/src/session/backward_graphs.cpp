#include "session/backward_graphs.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "rt/op_observer.h"

namespace rt::prof::session {
namespace {

// The backward this thread is running, as far as the recorder that saw it start is concerned.
struct Pending {
  const BackwardGraphs* owner = nullptr;
  int depth = 0;              // nested backward calls on this thread
  size_t expected_nodes = 0;  // what the engine will run (on_backward_start)
  bool started = false;       // the first node was seen
  std::unordered_set<uint64_t> ids;  // only for backwards with several roots
  GraphRecord record;
};
thread_local Pending t_pending;

// Adds the nodes and edges of `more` that `into` lacks, then restores the snapshot order (non-leaves by
// sequence_nr descending, AccumulateGrad leaves last, edges in their source node's order).
void merge(autograd::GraphSnapshot& into, autograd::GraphSnapshot more, std::unordered_set<uint64_t>& ids) {
  std::unordered_set<uint64_t> added;
  for (auto& n : more.nodes)
    if (ids.insert(n.id).second) {
      added.insert(n.id);
      into.nodes.push_back(std::move(n));
    }
  for (auto& e : more.edges)
    if (added.count(e.from)) into.edges.push_back(std::move(e));
  std::stable_partition(into.nodes.begin(), into.nodes.end(), [](const auto& n) { return !n.is_leaf; });
  const auto leaves = std::find_if(into.nodes.begin(), into.nodes.end(), [](const auto& n) { return n.is_leaf; });
  std::stable_sort(into.nodes.begin(), leaves,
                   [](const auto& a, const auto& b) { return a.sequence_nr > b.sequence_nr; });
  std::unordered_map<uint64_t, size_t> position;
  for (size_t i = 0; i < into.nodes.size(); ++i) position.emplace(into.nodes[i].id, i);
  std::stable_sort(into.edges.begin(), into.edges.end(),
                   [&](const auto& a, const auto& b) { return position.at(a.from) < position.at(b.from); });
}

}  // namespace

BackwardGraphs::~BackwardGraphs() { detach(); }

void BackwardGraphs::attach() {
  if (!attached_.exchange(true)) autograd::add_autograd_observer(this);
}

void BackwardGraphs::detach() {
  if (attached_.exchange(false)) autograd::remove_autograd_observer(this);
}

void BackwardGraphs::on_backward_start(size_t num_nodes) {
  Pending& p = t_pending;
  if (p.owner != this) {
    p = Pending{};
    p.owner = this;
  }
  if (p.depth++ > 0) return;
  p.expected_nodes = num_nodes;
  p.started = false;
  p.ids.clear();
  p.record = GraphRecord{};
}

void BackwardGraphs::before_node(const autograd::NodeEvent& event) {
  Pending& p = t_pending;
  if (p.owner != this || p.depth != 1 || !attached_.load(std::memory_order_relaxed)) return;
  if (!p.started) {
    p.started = true;
    p.record.time_ns = rt::now_ns();
    p.record.step = step_.load(std::memory_order_relaxed);
    p.record.thread = rt::current_thread_id();
    p.record.graph = autograd::snapshot_graph(*event.node);
    if (p.record.graph.nodes.size() < p.expected_nodes)  // several roots: the others come up later
      for (const auto& n : p.record.graph.nodes) p.ids.insert(n.id);
    return;
  }
  if (p.ids.empty()) return;
  if (!p.ids.count(reinterpret_cast<uint64_t>(event.node)))
    merge(p.record.graph, autograd::snapshot_graph(*event.node), p.ids);
}

void BackwardGraphs::on_backward_end() {
  Pending& p = t_pending;
  if (p.owner != this || p.depth == 0) return;
  if (--p.depth > 0 || !p.started) return;
  p.started = false;
  p.ids.clear();
  if (!attached_.load(std::memory_order_relaxed)) return;
  keep(std::move(p.record));
  p.record = GraphRecord{};
}

void BackwardGraphs::keep(GraphRecord record) {
  record.backward_index = calls_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lk(mu_);
  if (!first_ && !first_taken_) {
    first_ = std::move(record);
  } else {
    latest_ = std::move(record);
    ++latest_version_;
  }
}

void BackwardGraphs::take_first(std::vector<GraphRecord>& out) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!first_) return;
  out.push_back(std::move(*first_));
  first_.reset();
  first_taken_ = true;
}

void BackwardGraphs::take_latest(std::vector<GraphRecord>& out) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!latest_) return;
  out.push_back(std::move(*latest_));
  latest_.reset();
}

std::optional<GraphRecord> BackwardGraphs::peek_latest(uint64_t* version) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (version) *version = latest_version_;
  return latest_;
}

uint64_t BackwardGraphs::latest_version() const {
  std::lock_guard<std::mutex> lk(mu_);
  return latest_version_;
}

}  // namespace rt::prof::session
