#include "rt/viz/graph_annotations.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace rt::viz {
namespace {

// Allocations of one thread, by time, with prefix sums of their bytes.
struct ThreadAllocations {
  std::vector<int64_t> times;
  std::vector<int64_t> prefix{0};
  int64_t bytes_between(int64_t start, int64_t end) const {
    const auto lo = std::lower_bound(times.begin(), times.end(), start) - times.begin();
    const auto hi = std::upper_bound(times.begin(), times.end(), end) - times.begin();
    return hi > lo ? prefix[size_t(hi)] - prefix[size_t(lo)] : 0;
  }
};

std::unordered_map<uint64_t, ThreadAllocations> allocations_by_thread(const prof::SessionData& s) {
  std::unordered_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> raw;
  for (const auto& m : s.memory)
    if (m.bytes > 0) raw[m.thread].emplace_back(m.time_ns, m.bytes);
  std::unordered_map<uint64_t, ThreadAllocations> out;
  for (auto& [thread, events] : raw) {
    std::sort(events.begin(), events.end());
    auto& t = out[thread];
    for (const auto& [time, bytes] : events) {
      t.times.push_back(time);
      t.prefix.push_back(t.prefix.back() + bytes);
    }
  }
  return out;
}

}  // namespace

GraphAnnotations::GraphAnnotations(const GraphModel& model, const prof::SessionData& session)
    : ops_(model.op_count()), clusters_(model.cluster_count()) {
  std::unordered_map<int64_t, int> op_by_seq;
  for (size_t i = 0; i < model.op_count(); ++i) {
    const auto& n = model.op(int(i));
    if (n.is_leaf || n.sequence_nr > uint64_t(std::numeric_limits<int64_t>::max())) continue;
    op_by_seq.emplace(int64_t(n.sequence_nr), int(i));
  }
  std::vector<std::vector<size_t>> forward(model.op_count());
  for (size_t r = 0; r < session.ops.size(); ++r) {
    const auto& rec = session.ops[r];
    if (rec.sequence_nr < 0) continue;
    auto it = op_by_seq.find(rec.sequence_nr);
    if (it == op_by_seq.end()) continue;
    if (rec.kind == prof::OpKind::BackwardNode) {
      auto& c = ops_[size_t(it->second)];
      c.backward_ns += rec.end_ns - rec.start_ns;
      ++c.backward_calls;
    } else if (rec.kind == prof::OpKind::Op) {
      forward[size_t(it->second)].push_back(r);
    }
  }

  const auto allocations = allocations_by_thread(session);
  for (size_t i = 0; i < forward.size(); ++i) {
    auto& recs = forward[i];
    if (recs.empty()) continue;
    const std::string& fwd = model.op(int(i)).forward_op;
    auto named = [&](size_t r) { return !fwd.empty() && session.strings.at(session.ops[r].name) == fwd; };
    if (std::any_of(recs.begin(), recs.end(), named)) recs.erase(std::remove_if(recs.begin(), recs.end(),
                                                                                [&](size_t r) { return !named(r); }),
                                                                 recs.end());
    int32_t depth = std::numeric_limits<int32_t>::max();
    for (size_t r : recs) depth = std::min(depth, session.ops[r].depth);
    auto& c = ops_[i];
    for (size_t r : recs) {
      const auto& rec = session.ops[r];
      if (rec.depth != depth) continue;
      c.forward_ns += rec.end_ns - rec.start_ns;
      ++c.forward_calls;
      if (auto a = allocations.find(rec.thread); a != allocations.end())
        c.bytes += a->second.bytes_between(rec.start_ns, rec.end_ns);
    }
  }

  for (size_t i = 0; i < ops_.size(); ++i) {
    const auto& c = ops_[i];
    if (c.forward_calls || c.backward_calls) ++matched_;
    for (int k = model.op_cluster(int(i)); k >= 0; k = model.cluster(k).parent) {
      auto& s = clusters_[size_t(k)];
      s.forward_ns += c.forward_ns;
      s.backward_ns += c.backward_ns;
      s.bytes += c.bytes;
      s.forward_calls += c.forward_calls;
      s.backward_calls += c.backward_calls;
    }
  }
}

}  // namespace rt::viz
