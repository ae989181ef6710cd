#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/memory_timeline.h"

namespace rt::viz {

void MemoryTimelineModel::columns(int32_t device, int64_t t0, int64_t t1, double width_px,
                                  std::vector<MemoryColumn>& out) const {
  const DeviceMemory* dev = this->device(device);
  if (!dev) throw ValueError(fmt::format("MemoryTimelineModel::columns: no memory events on device {}", device));
  if (t1 < t0) throw ValueError(fmt::format("MemoryTimelineModel::columns: t1 ({}) is before t0 ({})", t1, t0));
  if (!std::isfinite(width_px) || width_px <= 0)
    throw ValueError(fmt::format("MemoryTimelineModel::columns: width must be > 0 pixels, got {}", width_px));

  const auto pixels = int64_t(std::ceil(width_px));
  const double ns_per_px = double(t1 - t0) / width_px;
  const auto& times = dev->times;
  size_t next = size_t(std::upper_bound(times.begin(), times.end(), t0) - times.begin());
  MemoryColumn state;  // the state entering the current pixel
  if (next > 0) state = {0, times[next - 1], dev->totals[next - 1], dev->bytes[next - 1]};

  out.resize(size_t(pixels));
  for (int64_t p = 0; p < pixels; ++p) {
    const bool last_pixel = p + 1 == pixels;
    const int64_t pixel_start = t0 + int64_t(std::floor(double(p) * ns_per_px));
    const int64_t pixel_end = last_pixel ? t1 : t0 + int64_t(std::floor(double(p + 1) * ns_per_px));
    MemoryColumn column = state;
    column.pixel = p;
    if (next == 0 || times[next - 1] < pixel_start) column.time_ns = pixel_start;
    for (; next < times.size() && (times[next] < pixel_end || (last_pixel && times[next] <= t1)); ++next) {
      state = {p, times[next], dev->totals[next], dev->bytes[next]};
      // A sample at the pixel's very start replaces the state carried in: that one lasted no time here.
      if (state.total > column.total || times[next] == pixel_start) column = state;
    }
    out[size_t(p)] = column;
  }
}

}  // namespace rt::viz
