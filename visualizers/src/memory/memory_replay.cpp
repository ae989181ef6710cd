#include "memory/memory_replay.h"

#include <algorithm>

#include <fmt/format.h>

namespace rt::viz::detail {

// Note [Memory replay log]
// The memory timeline replays each device's events in (time, record) order (rt/viz/memory_timeline.h). A live
// session's new events usually come after everything replayed, and then the replay simply goes on. But a
// record can arrive late: a thread's buffer drained just after another's hands over an event older than ones
// already shown. Events of one device only interact through that device's state (live blocks by address,
// bytes per category), so only that device rewinds: every replayed step logs what it did (the block it made or
// freed, the block its address held before, the warning it counted), the steps after the earliest new time
// are undone newest first, the samples after that time are dropped, and the undone records are replayed again
// merged with the new ones. A new record sorts after the replayed records of equal time (it has a higher
// record index), so the steps at the earliest new time itself stay. Each device's blocks are its allocations in
// replay order, which is by start time, so an undone allocation is always the last block. The peak is kept as
// a running "first largest so far" per sample, so dropping samples never loses it. The log costs 16 bytes per
// event; rewinding costs the events after the earliest late one.

namespace {

size_t category_index(prof::MemoryCategoryId c) { return std::min(size_t(c), kCategoryCount - 1); }

DeviceMemory& device_memory(std::vector<DeviceMemory>& devices, int32_t id) {
  auto it = std::lower_bound(devices.begin(), devices.end(), id,
                             [](const DeviceMemory& d, int32_t device) { return d.device < device; });
  if (it == devices.end() || it->device != id) {
    DeviceMemory d;
    d.device = id;
    d.label = id < 0 ? "CPU" : fmt::format("cuda:{}", id);
    it = devices.insert(it, std::move(d));
  }
  return *it;
}

}  // namespace

std::array<size_t, 4> MemoryReplay::warning_counts() const {
  std::array<size_t, 4> total{};
  for (const auto& [id, dev] : devices_)
    for (size_t k = 0; k < total.size(); ++k) total[k] += dev.warnings[k];
  return total;
}

void MemoryReplay::add(const prof::SessionData& data, size_t from, std::vector<DeviceMemory>& devices,
                       MemoryBlocks& blocks) {
  blocks.origin_ns_ = data.start_ns;
  for (size_t i = blocks.names_.size(); i < data.strings.size(); ++i)
    blocks.names_.push_back(data.strings.at(prof::StringId(i)));
  std::map<int32_t, std::vector<uint32_t>> added;
  for (size_t k = from; k < data.memory.size(); ++k) added[data.memory[k].device].push_back(uint32_t(k));
  replayed_ = data.memory.size();

  for (auto& [id, records] : added) {
    Device& dev = devices_[id];
    std::vector<MemoryBlock>& device_blocks = blocks.device_blocks(id);
    int64_t earliest = data.memory[records.front()].time_ns;
    for (uint32_t k : records) earliest = std::min(earliest, data.memory[k].time_ns);
    if (!dev.steps.empty() && data.memory[dev.steps.back().record].time_ns > earliest) {
      auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceMemory& d) { return d.device == id; });
      rewind(data, dev, earliest, it == devices.end() ? nullptr : &*it, device_blocks, records);
    }
    std::sort(records.begin(), records.end(), [&](uint32_t a, uint32_t b) {
      const int64_t ta = data.memory[a].time_ns, tb = data.memory[b].time_ns;
      return ta != tb ? ta < tb : a < b;
    });
    for (uint32_t k : records) play(data, k, dev, devices, device_blocks);
  }
}

void MemoryReplay::rewind(const prof::SessionData& data, Device& dev, int64_t after_ns, DeviceMemory* memory,
                          std::vector<MemoryBlock>& blocks, std::vector<uint32_t>& redo) {
  while (!dev.steps.empty() && data.memory[dev.steps.back().record].time_ns > after_ns) {
    const Step s = dev.steps.back();
    dev.steps.pop_back();
    redo.push_back(s.record);
    if (s.warning >= 0) --dev.warnings[size_t(s.warning)];
    const prof::MemoryRecord& e = data.memory[s.record];
    if (s.effect == Effect::Alloc) {
      const MemoryBlock& b = blocks[s.block];
      dev.now[size_t(b.category)] -= b.bytes;
      if (s.previous == kNone) dev.live.erase(e.address);
      else dev.live[e.address] = s.previous;
      blocks.pop_back();  // Note [Memory replay log]: the newest block is the one this step made
    } else if (s.effect == Effect::Free) {
      MemoryBlock& b = blocks[s.block];
      dev.now[size_t(b.category)] += b.bytes;
      dev.live[e.address] = s.block;
      b.freed = false;
      b.end_ns = 0;
    }
  }
  if (!memory) return;
  const auto keep =
      size_t(std::upper_bound(memory->times.begin(), memory->times.end(), after_ns) - memory->times.begin());
  memory->times.resize(keep);
  memory->bytes.resize(keep);
  memory->totals.resize(keep);
  dev.peak_upto.resize(keep);
  if (keep == 0) {
    memory->peak = {};
  } else {
    const uint32_t p = dev.peak_upto.back();
    memory->peak = {memory->times[p], memory->totals[p], memory->bytes[p]};
  }
}

void MemoryReplay::play(const prof::SessionData& data, uint32_t record, Device& dev, std::vector<DeviceMemory>& devices,
                        std::vector<MemoryBlock>& blocks) {
  const prof::MemoryRecord& e = data.memory[record];
  Step s;
  s.record = record;
  if (e.bytes == 0) {
    s.warning = int8_t(MemoryWarningKind::ZeroBytes);
    ++dev.warnings[size_t(s.warning)];
    dev.steps.push_back(s);
    return;
  }
  DeviceMemory& memory = device_memory(devices, e.device);
  if (e.bytes > 0) {
    s.effect = Effect::Alloc;
    s.block = uint32_t(blocks.size());
    auto [it, inserted] = dev.live.try_emplace(e.address, s.block);
    if (!inserted) {
      s.previous = it->second;
      s.warning = int8_t(MemoryWarningKind::AddressReused);
      it->second = s.block;
    }
    const size_t c = category_index(e.category);
    blocks.push_back({.start_ns = e.time_ns,
                      .bytes = e.bytes,
                      .address = e.address,
                      .device = e.device,
                      .category = prof::MemoryCategoryId(c),
                      .op = e.op});
    dev.now[c] += e.bytes;
  } else {
    auto it = dev.live.find(e.address);
    if (it == dev.live.end()) {
      s.warning = int8_t(MemoryWarningKind::FreeWithoutAllocation);
      ++dev.warnings[size_t(s.warning)];
      dev.steps.push_back(s);
      return;
    }
    s.effect = Effect::Free;
    s.block = it->second;
    MemoryBlock& b = blocks[s.block];
    dev.live.erase(it);
    if (-e.bytes != b.bytes) s.warning = int8_t(MemoryWarningKind::SizeMismatch);
    b.freed = true;
    b.end_ns = e.time_ns;
    dev.now[size_t(b.category)] -= b.bytes;
  }
  if (s.warning >= 0) ++dev.warnings[size_t(s.warning)];
  dev.steps.push_back(s);

  const int64_t total = total_of(dev.now);
  if (!memory.times.empty() && memory.times.back() == e.time_ns) {
    memory.bytes.back() = dev.now;
    memory.totals.back() = total;
    dev.peak_upto.pop_back();
  } else {
    memory.times.push_back(e.time_ns);
    memory.bytes.push_back(dev.now);
    memory.totals.push_back(total);
  }
  const auto last = uint32_t(memory.totals.size() - 1);
  const bool new_peak = dev.peak_upto.empty() || memory.totals[last] > memory.totals[dev.peak_upto.back()];
  dev.peak_upto.push_back(new_peak ? last : dev.peak_upto.back());
  const uint32_t p = dev.peak_upto.back();
  memory.peak = {memory.times[p], memory.totals[p], memory.bytes[p]};
}

}  // namespace rt::viz::detail
