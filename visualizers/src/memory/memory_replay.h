// Internal: the replay behind MemoryTimelineModel (rt/viz/memory_timeline.h), kept so a live session's new
// events continue it instead of starting over. See Note [Memory replay log] in memory_replay.cpp.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "rt/prof/events.h"
#include "rt/viz/memory_timeline.h"

namespace rt::viz::detail {

class MemoryReplay {
 public:
  // Replays data.memory[from, end) after the records replayed before (every record before `from`), into
  // `devices` (sorted by device) and `blocks`, exactly as one replay of all the records would.
  void add(const prof::SessionData& data, size_t from, std::vector<DeviceMemory>& devices, MemoryBlocks& blocks);
  size_t replayed() const { return replayed_; }
  std::array<size_t, 4> warning_counts() const;  // by MemoryWarningKind

 private:
  enum class Effect : uint8_t { Ignored, Alloc, Free };
  static constexpr uint32_t kNone = UINT32_MAX;

  // What replaying one record did, so it can be undone.
  struct Step {
    uint32_t record = 0;
    uint32_t block = kNone;     // Alloc: the block it made; Free: the block it freed
    uint32_t previous = kNone;  // Alloc: the block live at the address before it
    Effect effect = Effect::Ignored;
    int8_t warning = -1;  // the MemoryWarningKind it counted, -1 none
  };

  struct Device {
    std::vector<Step> steps;                      // in replay order: (time, record)
    std::unordered_map<uint64_t, uint32_t> live;  // address -> block
    CategoryBytes now{};
    std::vector<uint32_t> peak_upto;  // per sample: the first sample with the largest total so far
    std::array<size_t, 4> warnings{};
  };

  // Undoes the device's steps after `after_ns` (their records go to `redo`) and drops its samples after it.
  void rewind(const prof::SessionData& data, Device& dev, int64_t after_ns, DeviceMemory* memory,
              std::vector<MemoryBlock>& blocks, std::vector<uint32_t>& redo);
  void play(const prof::SessionData& data, uint32_t record, Device& dev, std::vector<DeviceMemory>& devices,
            std::vector<MemoryBlock>& blocks);

  std::map<int32_t, Device> devices_;
  size_t replayed_ = 0;
};

}  // namespace rt::viz::detail
