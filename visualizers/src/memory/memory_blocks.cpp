#include <algorithm>
#include <cstdlib>
#include <tuple>

#include <fmt/format.h>

#include "rt/prof/summary.h"
#include "rt/viz/memory_timeline.h"

namespace rt::viz {

namespace {

bool stacked_below(const MemoryBlock* a, const MemoryBlock* b) {
  return std::tie(a->category, a->start_ns, a->address) < std::tie(b->category, b->start_ns, b->address);
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const double magnitude = double(std::llabs(bytes));
  if (magnitude < 1024) return fmt::format("{} B", bytes);
  if (magnitude < 1024.0 * 1024) return fmt::format("{:.2f} KiB", double(bytes) / 1024);
  if (magnitude < 1024.0 * 1024 * 1024) return fmt::format("{:.2f} MiB", double(bytes) / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", double(bytes) / (1024.0 * 1024 * 1024));
}

size_t MemoryBlocks::size() const {
  size_t n = 0;
  for (const auto& [device, blocks] : devices_) n += blocks.size();
  return n;
}

const std::vector<MemoryBlock>& MemoryBlocks::on_device(int32_t device) const {
  static const std::vector<MemoryBlock> kNone;
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device,
                             [](const auto& entry, int32_t d) { return entry.first < d; });
  return it != devices_.end() && it->first == device ? it->second : kNone;
}

std::vector<MemoryBlock>& MemoryBlocks::device_blocks(int32_t device) {
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device,
                             [](const auto& entry, int32_t d) { return entry.first < d; });
  if (it == devices_.end() || it->first != device) it = devices_.insert(it, {device, {}});
  return it->second;
}

std::vector<const MemoryBlock*> MemoryBlocks::alive_at(int32_t device, int64_t t) const {
  std::vector<const MemoryBlock*> out;
  for (const MemoryBlock& b : on_device(device)) {
    if (b.start_ns > t) break;
    if (b.alive_at(t)) out.push_back(&b);
  }
  std::sort(out.begin(), out.end(), stacked_below);
  return out;
}

std::vector<const MemoryBlock*> MemoryBlocks::largest_at(int32_t device, int64_t t, size_t n) const {
  std::vector<const MemoryBlock*> alive = alive_at(device, t);
  const auto by_size = [](const MemoryBlock* a, const MemoryBlock* b) {
    return a->bytes != b->bytes ? a->bytes > b->bytes : stacked_below(a, b);
  };
  const size_t keep = std::min(n, alive.size());
  std::partial_sort(alive.begin(), alive.begin() + ptrdiff_t(keep), alive.end(), by_size);
  alive.resize(keep);
  return alive;
}

const MemoryBlock* MemoryBlocks::hit_test(int32_t device, int64_t t, int64_t offset_bytes) const {
  if (offset_bytes < 0) return nullptr;
  int64_t base = 0;
  for (const MemoryBlock* b : alive_at(device, t)) {
    if (offset_bytes < base + b->bytes) return b;
    base += b->bytes;
  }
  return nullptr;
}

const std::string& MemoryBlocks::op_name(const MemoryBlock& b) const {
  static const std::string kNone;
  return b.op < names_.size() ? names_[b.op] : kNone;
}

std::string MemoryBlocks::hover_text(const MemoryBlock& b) const {
  const std::string& op = op_name(b);
  std::string text = fmt::format("{}: {} {}, allocated at {}", op.empty() ? "(unknown op)" : op,
                                 format_bytes(b.bytes), prof::memory_category_name(b.category),
                                 prof::format_time_ns(b.start_ns - origin_ns_));
  if (b.freed) text += fmt::format(", freed at {}", prof::format_time_ns(b.end_ns - origin_ns_));
  else text += ", never freed";
  return text;
}

}  // namespace rt::viz
