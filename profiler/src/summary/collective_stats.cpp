#include <algorithm>
#include <map>

#include "rt/prof/summary.h"

namespace rt::prof {

std::vector<CollectiveStats> collective_stats(const SessionData& data) {
  std::map<std::pair<StringId, StringId>, CollectiveStats> rows;  // by (group, name)
  for (const CollectiveRecord& c : data.collectives) {
    CollectiveStats& row = rows[{c.group, c.name}];
    const int64_t ns = std::max<int64_t>(c.end_ns - c.start_ns, 0);
    ++row.calls;
    row.bytes += c.bytes;
    row.total_ns += ns;
    row.max_ns = std::max(row.max_ns, ns);
    row.queued_ns += std::max<int64_t>(c.start_ns - c.enqueue_ns, 0);
  }
  std::vector<CollectiveStats> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) {
    row.group = data.strings.at(key.first);
    row.name = data.strings.at(key.second);
    out.push_back(std::move(row));
  }
  std::sort(out.begin(), out.end(), [](const CollectiveStats& a, const CollectiveStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return std::tie(a.group, a.name) < std::tie(b.group, b.name);
  });
  return out;
}

}  // namespace rt::prof
