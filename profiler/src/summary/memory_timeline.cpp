#include <algorithm>
#include <map>
#include <numeric>

#include "rt/prof/summary.h"

namespace rt::prof {

std::string_view memory_category_name(MemoryCategoryId c) {
  switch (c) {
    case MemoryCategoryId::Parameter: return "parameter";
    case MemoryCategoryId::Gradient: return "gradient";
    case MemoryCategoryId::Activation: return "activation";
    case MemoryCategoryId::OptimizerState: return "optimizer_state";
    case MemoryCategoryId::Temporary: return "temporary";
    case MemoryCategoryId::Other: return "other";
  }
  return "unknown";
}

int64_t MemoryTotals::total() const { return std::accumulate(bytes.begin(), bytes.end(), int64_t(0)); }

MemoryTimeline::MemoryTimeline(const SessionData& data, std::optional<int32_t> device) {
  std::vector<size_t> order;
  for (size_t i = 0; i < data.memory.size(); ++i)
    if (!device || data.memory[i].device == *device) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return data.memory[a].time_ns < data.memory[b].time_ns; });

  std::map<std::pair<int32_t, uint64_t>, MemoryCategoryId> live_blocks;
  MemoryTotals now, before_time;
  for (size_t k = 0; k < order.size(); ++k) {
    const MemoryRecord& e = data.memory[order[k]];
    size_t cat = std::min(size_t(e.category), kMemoryCategoryCount - 1);
    if (e.bytes > 0) {
      live_blocks[{e.device, e.address}] = MemoryCategoryId(cat);
      allocated_total_.bytes[cat] += e.bytes;
    } else if (e.bytes < 0) {
      if (auto it = live_blocks.find({e.device, e.address}); it != live_blocks.end()) {
        cat = size_t(it->second);
        live_blocks.erase(it);
      }
      freed_total_.bytes[cat] += -e.bytes;
    }
    now.bytes[cat] += e.bytes;
    peak_by_category_.bytes[cat] = std::max(peak_by_category_.bytes[cat], now.bytes[cat]);
    const int64_t total = now.total();
    if (total > peak_bytes_) {
      peak_bytes_ = total;
      peak_time_ns_ = e.time_ns;
      at_peak_ = now;
    }
    const bool last_at_time = k + 1 == order.size() || data.memory[order[k + 1]].time_ns != e.time_ns;
    if (!last_at_time) continue;
    times_.push_back(e.time_ns);
    totals_.push_back(now);
    for (size_t c = 0; c < kMemoryCategoryCount; ++c)
      if (now.bytes[c] != before_time.bytes[c]) series_[c].push_back({e.time_ns, now.bytes[c]});
    total_series_.push_back({e.time_ns, total});
    before_time = now;
  }
}

MemoryTotals MemoryTimeline::live_at(int64_t time_ns) const {
  const auto it = std::upper_bound(times_.begin(), times_.end(), time_ns);
  if (it == times_.begin()) return {};
  return totals_[size_t(it - times_.begin()) - 1];
}

}  // namespace rt::prof
