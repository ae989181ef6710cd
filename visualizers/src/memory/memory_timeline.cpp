#include "rt/viz/memory_timeline.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "memory/memory_replay.h"
#include "rt/error.h"

namespace rt::viz {

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

MemoryTimelineModel::MemoryTimelineModel(const prof::SessionData& data)
    : replay_(std::make_unique<detail::MemoryReplay>()) {
  replay_->add(data, 0, devices_, blocks_);
  set_warnings();
}

MemoryTimelineModel::~MemoryTimelineModel() = default;
MemoryTimelineModel::MemoryTimelineModel(MemoryTimelineModel&&) noexcept = default;
MemoryTimelineModel& MemoryTimelineModel::operator=(MemoryTimelineModel&&) noexcept = default;

void MemoryTimelineModel::append(const prof::SessionData& data, const prof::SessionGrowth& growth) {
  if (growth.memory != replay_->replayed() || growth.memory > data.memory.size())
    throw ValueError(
        fmt::format("MemoryTimelineModel::append: the growth's first new memory event is {}, but the "
                    "model replayed {} and the data holds {}: give append() every growth of the data "
                    "it was built from, in order",
                    growth.memory, replay_->replayed(), data.memory.size()));
  replay_->add(data, growth.memory, devices_, blocks_);
  set_warnings();
}

void MemoryTimelineModel::set_warnings() {
  warnings_.clear();
  const std::array<size_t, 4> counts = replay_->warning_counts();
  for (size_t k = 0; k < counts.size(); ++k)
    if (counts[k] > 0) warnings_.push_back({MemoryWarningKind(k), counts[k]});
}

const DeviceMemory* MemoryTimelineModel::device(int32_t device) const {
  for (const DeviceMemory& d : devices_)
    if (d.device == device) return &d;
  return nullptr;
}

}  // namespace rt::viz
