#include <algorithm>
#include <map>

#include "rt/prof/summary.h"
#include "summary/op_timing.h"

namespace rt::prof {

std::vector<OpStats> key_averages(const SessionData& data, bool group_by_input_shape) {
  const std::vector<OpTiming> timing = op_timings(data);
  std::map<std::pair<StringId, StringId>, OpStats> groups;
  for (size_t i = 0; i < data.ops.size(); ++i) {
    const OpRecord& op = data.ops[i];
    OpStats& s = groups[{op.name, group_by_input_shape ? op.input_shapes : StringId(0)}];
    s.calls += 1;
    s.total_ns += timing[i].end_ns - op.start_ns;  // clamped like the exported trace and the timeline
    s.self_ns += timing[i].self_ns;
    s.self_device_ns += timing[i].self_device_ns;
    s.device_total_ns += timing[i].device_total_ns;
    s.self_cpu_memory_bytes += timing[i].self_memory[0];
    s.cpu_memory_bytes += timing[i].total_memory[0];
    s.self_device_memory_bytes += timing[i].self_memory[1];
    s.device_memory_bytes += timing[i].total_memory[1];
  }
  std::vector<OpStats> out;
  out.reserve(groups.size());
  for (auto& [key, s] : groups) {
    s.name = data.strings.at(key.first);
    s.input_shapes = data.strings.at(key.second);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const OpStats& a, const OpStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.name != b.name) return a.name < b.name;
    return a.input_shapes < b.input_shapes;
  });
  return out;
}

}  // namespace rt::prof
