#include "summary/op_timing.h"

#include <algorithm>
#include <limits>
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

// Adds each of the thread's memory events to the innermost op containing it. `order`: the
// thread's ops by start (parents before children), `memory`: its memory events by time.
void attribute_memory(const SessionData& data, const std::vector<size_t>& order, const std::vector<size_t>& memory,
                      std::vector<OpTiming>& t) {
  const auto& ops = data.ops;
  std::vector<size_t> stack;
  size_t m = 0;
  auto attribute_before = [&](int64_t limit) {
    for (; m < memory.size() && data.memory[memory[m]].time_ns < limit; ++m) {
      const MemoryRecord& e = data.memory[memory[m]];
      while (!stack.empty() && ops[stack.back()].end_ns < e.time_ns) stack.pop_back();
      if (!stack.empty()) t[stack.back()].self_memory[e.device < 0 ? 0 : 1] += e.bytes;
    }
  };
  for (size_t i : order) {
    attribute_before(ops[i].start_ns);
    while (!stack.empty() && ops[stack.back()].end_ns < ops[i].start_ns) stack.pop_back();
    stack.push_back(i);
  }
  attribute_before(std::numeric_limits<int64_t>::max());
  for (size_t i : order)
    for (int d = 0; d < 2; ++d) t[i].total_memory[d] = t[i].self_memory[d];
  for (auto it = order.rbegin(); it != order.rend(); ++it)  // children after parents: sum bottom-up
    if (const int64_t parent = t[*it].parent; parent >= 0)
      for (int d = 0; d < 2; ++d) t[size_t(parent)].total_memory[d] += t[*it].total_memory[d];
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

  std::unordered_map<uint64_t, std::vector<size_t>> by_thread, memory_by_thread;
  for (size_t i = 0; i < ops.size(); ++i) by_thread[ops[i].thread].push_back(i);
  for (size_t i = 0; i < data.memory.size(); ++i) memory_by_thread[data.memory[i].thread].push_back(i);

  std::vector<size_t> stack;
  auto pop = [&] {
    const size_t node = stack.back();
    stack.pop_back();
    if (t[node].parent >= 0) t[size_t(t[node].parent)].device_total_ns += t[node].device_total_ns;
  };
  for (auto& [thread, order] : by_thread) {
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
    if (auto mem = memory_by_thread.find(thread); mem != memory_by_thread.end()) {
      std::stable_sort(mem->second.begin(), mem->second.end(),
                       [&](size_t a, size_t b) { return data.memory[a].time_ns < data.memory[b].time_ns; });
      attribute_memory(data, order, mem->second, t);
    }
  }
  return t;
}

}  // namespace rt::prof
