// rt/viz/memory_timeline.h — memory over time by category (PyTorch's memory_viz, stacked): per
// device, live bytes of parameters, gradients, activations, optimizer state, temporaries and the
// rest after every event, the exact peak, and per-pixel columns that never lose a peak.
//
//   rt::viz::MemoryTimelineModel memory(session_data);
//   for (const rt::viz::DeviceMemory& dev : memory.devices()) {
//     std::printf("%s peak %lld bytes\n", dev.label.c_str(), (long long)dev.peak.total);
//     std::vector<rt::viz::MemoryColumn> columns;
//     memory.columns(dev.device, view.t0(), view.t1(), view.width_px(), columns);
//     for (const rt::viz::MemoryColumn& c : columns) draw_stack(c.pixel, c.bytes);  // bottom: parameter
//   }
//   // A live session: after rt::prof::append_delta grew the data, the replay goes on from where it was.
//   memory.append(session_data, growth);
//
// Contracts
// - Events are replayed per device in time order (record order for equal times). An allocation
//   adds its bytes to its category; a free removes the block it frees, with that block's bytes and
//   category (see rt/viz/memory_timeline_blocks.h), so every sample equals the bytes of the blocks
//   alive then. Repairs, counted in warnings(): a free with no live allocation at its address is
//   left out (its block was allocated before recording); an allocation at an address already live
//   leaves the earlier block live to the end; a free whose size differs from its allocation
//   removes the allocation's bytes; zero-byte records are ignored.
// - DeviceMemory::times holds each distinct event time once; bytes[i] is the state after every
//   event at times[i]; before times[0] nothing is live.
// - peak: the first sample with the largest total, with its split by category.
// - columns(): ceil(width) columns for [t0, t1]; column p covers [t0 + p*w, t0 + (p+1)*w) with
//   w = (t1 - t0) / width (the last one includes t1) and holds the state with the largest total
//   during it: the state entering the pixel or a sample inside it. Unknown device or bad arguments
//   (t1 < t0, width <= 0) throw rt::ValueError.
// - append(data, growth): `data` is the data the model was built from (or last appended), grown as growth
//   says (its memory events from growth.memory on are new). The model becomes exactly what a new model of
//   `data` would be, at the cost of the new events: the replay goes on from its state, and a device that gets
//   an event older than ones it replayed rewinds to that time only (Note [Memory replay log] in
//   visualizers/src/memory/memory_replay.cpp). A growth whose growth.memory is not the number of events the
//   model replayed, or past the data's, throws rt::ValueError.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/memory_timeline_blocks.h"

namespace rt::viz {

inline constexpr size_t kCategoryCount = 6;
using CategoryBytes = std::array<int64_t, kCategoryCount>;  // indexed by MemoryCategoryId

int64_t total_of(const CategoryBytes& bytes);
const char* category_label(prof::MemoryCategoryId c);  // "Parameter", "Optimizer state"...

struct MemorySample {
  int64_t time_ns = 0;
  int64_t total = 0;
  CategoryBytes bytes{};
};

struct DeviceMemory {
  int32_t device = -1;
  std::string label;                 // "CPU", "cuda:0"
  std::vector<int64_t> times;
  std::vector<CategoryBytes> bytes;  // after the events at times[i]
  std::vector<int64_t> totals;       // total_of(bytes[i])
  MemorySample peak;
  MemorySample at(int64_t time_ns) const;  // the state after every event at or before time_ns
};

struct MemoryColumn {
  int64_t pixel = 0;
  int64_t time_ns = 0;  // of the state shown: the sample's time, or the pixel's start if carried in
  int64_t total = 0;
  CategoryBytes bytes{};
};

enum class MemoryWarningKind : uint8_t { FreeWithoutAllocation, AddressReused, SizeMismatch, ZeroBytes };

struct MemoryWarning {
  MemoryWarningKind kind;
  size_t count = 0;
  std::string text() const;  // "2 frees without an allocation ignored"
};

class MemoryTimelineModel {
 public:
  explicit MemoryTimelineModel(const prof::SessionData& data);
  ~MemoryTimelineModel();
  MemoryTimelineModel(MemoryTimelineModel&&) noexcept;
  MemoryTimelineModel& operator=(MemoryTimelineModel&&) noexcept;

  // Takes in the memory events the data gained (see the contracts above).
  void append(const prof::SessionData& data, const prof::SessionGrowth& growth);

  const std::vector<DeviceMemory>& devices() const { return devices_; }  // by device, CPU (-1) first
  const DeviceMemory* device(int32_t device) const;                      // nullptr when absent
  const MemoryBlocks& blocks() const { return blocks_; }
  const std::vector<MemoryWarning>& warnings() const { return warnings_; }  // only non-zero counts

  void columns(int32_t device, int64_t t0, int64_t t1, double width_px, std::vector<MemoryColumn>& out) const;

 private:
  void set_warnings();

  std::vector<DeviceMemory> devices_;
  MemoryBlocks blocks_;
  std::vector<MemoryWarning> warnings_;
  std::unique_ptr<detail::MemoryReplay> replay_;  // the replay's state, which append() continues
};

}  // namespace rt::viz
