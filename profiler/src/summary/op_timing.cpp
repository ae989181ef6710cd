#include "summary/op_timing.h"

#include <algorithm>
#include <unordered_map>

namespace rt::prof {
namespace {

std::unordered_map<uint64_t, int64_t> device_time_by_correlation(const SessionData& data) {
  std::unordered_map<uint64_t, int64_t> out;
  for (const GpuActivityRecord& g : data.gpu) {
    const bool on_device = g.kind == GpuActivityKind::Kernel || g.kind == GpuActivityKind::Memcpy ||
                           g.kind == GpuActivityKind::Memset;
    if (on_device && g.external_id != 0) out[g.external_id] += std::max<int64_t>(0, g.end_ns - g.start_ns);
  }
  return out;
}

}  // namespace

std::vector<OpTiming> op_timings(const SessionData& data) {
  const auto& ops = data.ops;
  std::vector<OpTiming> t(ops.size());
  const auto device = device_time_by_correlation(data);
  for (size_t i = 0; i < ops.size(); ++i) {
    t[i].self_ns = std::max<int64_t>(0, ops[i].end_ns - ops[i].start_ns);
    if (ops[i].correlation_id != 0)
      if (auto it = device.find(ops[i].correlation_id); it != device.end()) t[i].self_device_ns = it->second;
    t[i].device_total_ns = t[i].self_device_ns;
  }

  std::unordered_map<uint64_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < ops.size(); ++i) by_thread[ops[i].thread].push_back(i);

  std::vector<size_t> stack;
  auto pop = [&] {
    const size_t node = stack.back();
    stack.pop_back();
    if (t[node].parent >= 0) t[size_t(t[node].parent)].device_total_ns += t[node].device_total_ns;
  };
  for (auto& [_, order] : by_thread) {
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (ops[a].start_ns != ops[b].start_ns) return ops[a].start_ns < ops[b].start_ns;
      if (ops[a].end_ns != ops[b].end_ns) return ops[a].end_ns > ops[b].end_ns;
      return a < b;
    });
    for (size_t i : order) {
      while (!stack.empty() && ops[stack.back()].end_ns <= ops[i].start_ns) pop();
      if (!stack.empty()) {
        const size_t parent = stack.back();
        t[i].parent = int64_t(parent);
        const int64_t inside = std::min(ops[i].end_ns, ops[parent].end_ns) - ops[i].start_ns;
        t[parent].self_ns = std::max<int64_t>(0, t[parent].self_ns - std::max<int64_t>(0, inside));
      }
      stack.push_back(i);
    }
    while (!stack.empty()) pop();
  }
  return t;
}

}  // namespace rt::prof
