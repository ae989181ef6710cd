#include "summary/op_timing.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "rt/prof/nesting.h"

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

// Adds each of the thread's memory events to the innermost op containing it (start <= time <= clamped
// end). `slices`: the thread's ops nested parent-first, `memory`: its memory events by time.
void attribute_memory(const SessionData& data, const std::vector<NestedSlice>& slices,
                      const std::vector<size_t>& memory, std::vector<OpTiming>& t) {
  std::vector<const NestedSlice*> stack;
  size_t m = 0;
  auto attribute_before = [&](int64_t limit) {
    for (; m < memory.size() && data.memory[memory[m]].time_ns < limit; ++m) {
      const MemoryRecord& e = data.memory[memory[m]];
      while (!stack.empty() && stack.back()->end < e.time_ns) stack.pop_back();
      if (!stack.empty()) t[stack.back()->index].self_memory[e.device < 0 ? 0 : 1] += e.bytes;
    }
  };
  for (const NestedSlice& s : slices) {
    attribute_before(s.start);
    while (!stack.empty() && stack.back()->end < s.start) stack.pop_back();
    stack.push_back(&s);
  }
  attribute_before(std::numeric_limits<int64_t>::max());
  for (const NestedSlice& s : slices)
    for (int d = 0; d < 2; ++d) t[s.index].total_memory[d] = t[s.index].self_memory[d];
  for (auto it = slices.rbegin(); it != slices.rend(); ++it)  // children after parents: sum bottom-up
    if (const int64_t parent = t[it->index].parent; parent >= 0)
      for (int d = 0; d < 2; ++d) t[size_t(parent)].total_memory[d] += t[it->index].total_memory[d];
}

}  // namespace

std::vector<OpTiming> op_timings(const SessionData& data) {
  const auto& ops = data.ops;
  std::vector<OpTiming> t(ops.size());
  const auto device = device_time_by_correlation(data);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].correlation_id != 0)
      if (auto it = device.find(ops[i].correlation_id); it != device.end()) t[i].self_device_ns = it->second;
    t[i].device_total_ns = t[i].self_device_ns;
  }

  std::unordered_map<uint64_t, std::vector<NestedSlice>> by_thread;
  std::unordered_map<uint64_t, std::vector<size_t>> memory_by_thread;
  for (size_t i = 0; i < ops.size(); ++i) by_thread[ops[i].thread].push_back(slice_of(ops[i], uint32_t(i)));
  for (size_t i = 0; i < data.memory.size(); ++i) memory_by_thread[data.memory[i].thread].push_back(i);

  for (auto& [thread, slices] : by_thread) {
    nest_slices(slices);  // Note [Nesting clamp]
    for (const NestedSlice& s : slices) {
      OpTiming& op = t[s.index];
      op.end_ns = s.end;
      op.self_ns = s.self_ns;
      op.parent = s.parent < 0 ? -1 : int64_t(slices[size_t(s.parent)].index);
    }
    for (auto it = slices.rbegin(); it != slices.rend(); ++it)  // children after parents: sum bottom-up
      if (const int64_t parent = t[it->index].parent; parent >= 0)
        t[size_t(parent)].device_total_ns += t[it->index].device_total_ns;
    if (auto mem = memory_by_thread.find(thread); mem != memory_by_thread.end()) {
      std::stable_sort(mem->second.begin(), mem->second.end(),
                       [&](size_t a, size_t b) { return data.memory[a].time_ns < data.memory[b].time_ns; });
      attribute_memory(data, slices, mem->second, t);
    }
  }
  return t;
}

}  // namespace rt::prof
