#include "rt/viz/memory_timeline.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

namespace rt::viz {

namespace {

size_t category_index(prof::MemoryCategoryId c) { return std::min(size_t(c), kCategoryCount - 1); }

struct PairHash {
  size_t operator()(const std::pair<int32_t, uint64_t>& k) const {
    return std::hash<uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ uint64_t(uint32_t(k.first)));
  }
};

struct Replay {
  std::map<int32_t, DeviceMemory> devices;
  std::vector<MemoryBlock> blocks;
  size_t counts[4] = {0, 0, 0, 0};  // by MemoryWarningKind
};

void record_sample(DeviceMemory& dev, int64_t time_ns, const CategoryBytes& now) {
  const int64_t total = total_of(now);
  if (!dev.times.empty() && dev.times.back() == time_ns) {
    dev.bytes.back() = now;
    dev.totals.back() = total;
  } else {
    dev.times.push_back(time_ns);
    dev.bytes.push_back(now);
    dev.totals.push_back(total);
  }
}

Replay replay(const prof::SessionData& data) {
  std::vector<size_t> order(data.memory.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return data.memory[a].time_ns < data.memory[b].time_ns; });

  Replay r;
  std::unordered_map<std::pair<int32_t, uint64_t>, size_t, PairHash> live;  // -> block index
  std::map<int32_t, CategoryBytes> now;
  live.reserve(data.memory.size() / 2 + 1);
  for (size_t k : order) {
    const prof::MemoryRecord& e = data.memory[k];
    if (e.bytes == 0) {
      ++r.counts[size_t(MemoryWarningKind::ZeroBytes)];
      continue;
    }
    DeviceMemory& dev = r.devices[e.device];
    CategoryBytes& state = now[e.device];
    const std::pair<int32_t, uint64_t> key{e.device, e.address};
    if (e.bytes > 0) {
      auto [it, inserted] = live.try_emplace(key, r.blocks.size());
      if (!inserted) {
        ++r.counts[size_t(MemoryWarningKind::AddressReused)];
        it->second = r.blocks.size();
      }
      const size_t c = category_index(e.category);
      r.blocks.push_back({.start_ns = e.time_ns, .bytes = e.bytes, .address = e.address, .device = e.device,
                          .category = prof::MemoryCategoryId(c), .op = e.op});
      state[c] += e.bytes;
    } else {
      auto it = live.find(key);
      if (it == live.end()) {
        ++r.counts[size_t(MemoryWarningKind::FreeWithoutAllocation)];
        continue;
      }
      MemoryBlock& b = r.blocks[it->second];
      live.erase(it);
      if (-e.bytes != b.bytes) ++r.counts[size_t(MemoryWarningKind::SizeMismatch)];
      b.freed = true;
      b.end_ns = e.time_ns;
      state[size_t(b.category)] -= b.bytes;
    }
    record_sample(dev, e.time_ns, state);
  }
  return r;
}

}  // namespace

int64_t total_of(const CategoryBytes& bytes) { return std::accumulate(bytes.begin(), bytes.end(), int64_t(0)); }

const char* category_label(prof::MemoryCategoryId c) {
  switch (c) {
    case prof::MemoryCategoryId::Parameter: return "Parameter";
    case prof::MemoryCategoryId::Gradient: return "Gradient";
    case prof::MemoryCategoryId::Activation: return "Activation";
    case prof::MemoryCategoryId::OptimizerState: return "Optimizer state";
    case prof::MemoryCategoryId::Temporary: return "Temporary";
    case prof::MemoryCategoryId::Other: return "Other";
  }
  return "Other";
}

MemorySample DeviceMemory::at(int64_t time_ns) const {
  const auto it = std::upper_bound(times.begin(), times.end(), time_ns);
  if (it == times.begin()) return {time_ns, 0, {}};
  const size_t i = size_t(it - times.begin()) - 1;
  return {times[i], totals[i], bytes[i]};
}

std::string MemoryWarning::text() const {
  const char* s = count == 1 ? "" : "s";
  switch (kind) {
    case MemoryWarningKind::FreeWithoutAllocation:
      return fmt::format("{} free{} without an allocation ignored", count, s);
    case MemoryWarningKind::AddressReused:
      return fmt::format("{} allocation{} at an address already in use", count, s);
    case MemoryWarningKind::SizeMismatch:
      return fmt::format("{} free{} whose size differs from the allocation", count, s);
    case MemoryWarningKind::ZeroBytes:
      return fmt::format("{} zero-byte record{} ignored", count, s);
  }
  return {};
}

MemoryTimelineModel::MemoryTimelineModel(const prof::SessionData& data) {
  Replay r = replay(data);
  for (size_t k = 0; k < 4; ++k)
    if (r.counts[k] > 0) warnings_.push_back({MemoryWarningKind(k), r.counts[k]});
  for (auto& [id, dev] : r.devices) {
    dev.device = id;
    dev.label = id < 0 ? "CPU" : fmt::format("cuda:{}", id);
    const auto peak = std::max_element(dev.totals.begin(), dev.totals.end());
    if (peak != dev.totals.end()) {
      const size_t i = size_t(peak - dev.totals.begin());
      dev.peak = {dev.times[i], dev.totals[i], dev.bytes[i]};
    }
    devices_.push_back(std::move(dev));
  }
  blocks_ = MemoryBlocks(std::move(r.blocks), data.strings.all(), data.start_ns);
}

const DeviceMemory* MemoryTimelineModel::device(int32_t device) const {
  for (const DeviceMemory& d : devices_)
    if (d.device == device) return &d;
  return nullptr;
}

}  // namespace rt::viz
