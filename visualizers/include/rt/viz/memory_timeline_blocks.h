// rt/viz/memory_timeline_blocks.h — the allocations behind the memory timeline: each allocation
// matched with its free as a block with a lifetime, the largest blocks alive at a time, and
// hit-testing the stacked chart ("what is at time t, y bytes up?").
//
//   const rt::viz::MemoryBlocks& blocks = memory_model.blocks();      // see rt/viz/memory_timeline.h
//   for (const rt::viz::MemoryBlock* b : blocks.largest_at(/*device=*/0, t, 10))
//     std::puts(blocks.hover_text(*b).c_str());   // "linear: 4.00 MiB activation, allocated at 1.200ms, freed at 3.400ms"
//   if (const rt::viz::MemoryBlock* b = blocks.hit_test(0, t, y_bytes)) tooltip(blocks.hover_text(*b));
//
// Contracts
// - A block is one allocation (MemoryRecord with bytes > 0) and the first later free (bytes < 0) at
//   the same device and address; it has the allocation's bytes, category and op. `freed` is false
//   while it is still live when the session ends.
// - A block is alive at t when start_ns <= t and (not freed or end_ns > t): after every event at t,
//   as the stacked series count them (rt/viz/memory_timeline.h), so the bytes of the blocks alive at
//   t add up to the series' live bytes at t, per category.
// - Stacking order (bottom to top): category in MemoryCategoryId order, then start time, then
//   address; hit_test(device, t, offset) returns the block whose [base, base + bytes) holds offset.
// - on_device(d) lists a device's blocks by start time (equal starts in replay order).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rt/prof/events.h"

namespace rt::viz {

struct MemoryBlock {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // meaningful when freed
  int64_t bytes = 0;
  uint64_t address = 0;
  int32_t device = -1;
  prof::MemoryCategoryId category = prof::MemoryCategoryId::Other;
  prof::StringId op = 0;  // the allocating op
  bool freed = false;
  bool alive_at(int64_t t) const { return start_ns <= t && (!freed || end_ns > t); }
};

namespace detail {
class MemoryReplay;
}

// Built by MemoryTimelineModel; hover texts give times relative to the session's start.
class MemoryBlocks {
 public:
  size_t size() const;                                                        // blocks on every device
  const std::vector<MemoryBlock>& on_device(int32_t device) const;            // by start time; empty: none
  std::vector<const MemoryBlock*> alive_at(int32_t device, int64_t t) const;  // in stacking order
  std::vector<const MemoryBlock*> largest_at(int32_t device, int64_t t, size_t n) const;  // largest first
  const MemoryBlock* hit_test(int32_t device, int64_t t, int64_t offset_bytes) const;  // nullptr: none
  const std::string& op_name(const MemoryBlock& b) const;   // "" when unknown
  std::string hover_text(const MemoryBlock& b) const;

 private:
  friend class detail::MemoryReplay;
  std::vector<MemoryBlock>& device_blocks(int32_t device);  // creates the device's list

  std::vector<std::pair<int32_t, std::vector<MemoryBlock>>> devices_;  // by device
  std::vector<std::string> names_;                                     // the session's strings
  int64_t origin_ns_ = 0;
};

// "512 B", "4.00 KiB", "1.50 MiB", "2.00 GiB".
std::string format_bytes(int64_t bytes);

}  // namespace rt::viz
