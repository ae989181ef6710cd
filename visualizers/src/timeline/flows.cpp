#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "rt/viz/timeline_flows.h"

namespace rt::viz {

namespace {

bool launched_work(prof::GpuActivityKind k) {
  return k == prof::GpuActivityKind::Kernel || k == prof::GpuActivityKind::Memcpy ||
         k == prof::GpuActivityKind::Memset;
}

bool ref_less(const EventRef& a, const EventRef& b) {
  return std::tie(a.track, a.level, a.index) < std::tie(b.track, b.level, b.index);
}

int64_t lo(const Flow& f) { return std::min(f.from_ns, f.to_ns); }
int64_t hi(const Flow& f) { return std::max(f.from_ns, f.to_ns); }

// For each key, the op (on a track) that started last; ties go to the later record.
template <typename KeyOf>
std::unordered_map<int64_t, uint32_t> last_started_ops(const TimelineModel& model, KeyOf key_of) {
  const prof::SessionData& d = model.data();
  std::unordered_map<int64_t, uint32_t> best;
  for (uint32_t i = 0; i < d.ops.size(); ++i) {
    const auto key = key_of(d.ops[i]);
    if (!key || !model.find(EventSource::Op, i)) continue;
    auto [it, inserted] = best.emplace(*key, i);
    if (!inserted && d.ops[i].start_ns >= d.ops[it->second].start_ns) it->second = i;
  }
  return best;
}

}  // namespace

FlowIndex::FlowIndex(const TimelineModel& model) {
  const prof::SessionData& d = model.data();
  auto add = [&](FlowKind kind, const EventRef& from, const EventRef& to) {
    flows_.push_back({kind, from, to, model.start_ns(from), model.start_ns(to)});
  };

  const auto launchers = last_started_ops(model, [](const prof::OpRecord& op) -> std::optional<int64_t> {
    if (op.correlation_id == 0) return std::nullopt;
    return int64_t(op.correlation_id);
  });
  for (uint32_t g = 0; g < d.gpu.size(); ++g) {
    if (!launched_work(d.gpu[g].kind) || d.gpu[g].external_id == 0) continue;
    auto it = launchers.find(int64_t(d.gpu[g].external_id));
    const auto to = model.find(EventSource::Gpu, g);
    if (it != launchers.end() && to) add(FlowKind::Launch, *model.find(EventSource::Op, it->second), *to);
  }

  const auto forwards = last_started_ops(model, [](const prof::OpRecord& op) -> std::optional<int64_t> {
    if (op.kind != prof::OpKind::Op || op.sequence_nr < 0) return std::nullopt;
    return op.sequence_nr;
  });
  for (uint32_t i = 0; i < d.ops.size(); ++i) {
    const prof::OpRecord& op = d.ops[i];
    if (op.kind != prof::OpKind::BackwardNode || op.sequence_nr < 0) continue;
    auto it = forwards.find(op.sequence_nr);
    const auto to = model.find(EventSource::Op, i);
    if (it != forwards.end() && to) add(FlowKind::ForwardBackward, *model.find(EventSource::Op, it->second), *to);
  }

  std::stable_sort(flows_.begin(), flows_.end(), [](const Flow& a, const Flow& b) { return lo(a) < lo(b); });
  for (uint32_t f = 0; f < flows_.size(); ++f) {
    by_event_.push_back({flows_[f].from, f});
    by_event_.push_back({flows_[f].to, f});
    max_span_ns_ = std::max(max_span_ns_, hi(flows_[f]) - lo(flows_[f]));
  }
  std::sort(by_event_.begin(), by_event_.end(), [](const auto& a, const auto& b) {
    return ref_less(a.first, b.first) || (a.first == b.first && a.second < b.second);
  });
}

std::vector<Flow> FlowIndex::for_event(const EventRef& e) const {
  auto range = std::equal_range(by_event_.begin(), by_event_.end(), std::pair<EventRef, uint32_t>{e, 0},
                                [](const auto& a, const auto& b) { return ref_less(a.first, b.first); });
  std::vector<Flow> out;
  for (auto it = range.first; it != range.second; ++it) out.push_back(flows_[it->second]);
  return out;
}

void FlowIndex::in_window(int64_t t0, int64_t t1, std::vector<Flow>& out) const {
  out.clear();
  auto it = std::lower_bound(flows_.begin(), flows_.end(), t0 - max_span_ns_,
                             [](const Flow& f, int64_t t) { return lo(f) < t; });
  for (; it != flows_.end() && lo(*it) <= t1; ++it)
    if (hi(*it) >= t0) out.push_back(*it);
}

}  // namespace rt::viz
