#include <algorithm>
#include <cmath>
#include <limits>

#include "rt/viz/timeline_select.h"

namespace rt::viz {

std::optional<EventRef> hit_test(const TimelineModel& model, uint32_t track, double x, double y,
                                 const TimelineView& view, const HitOptions& options) {
  if (track >= model.tracks().size() || !(y >= 0) || !(options.row_height_px > 0) || !std::isfinite(x))
    return std::nullopt;
  const auto& levels = model.tracks()[track].levels;
  const double row = std::floor(y / options.row_height_px);
  if (row >= double(levels.size())) return std::nullopt;
  const auto level_index = uint32_t(row);
  const TrackLevel& level = levels[level_index];

  const int64_t t = view.time_at(x);
  const double tolerance = std::max(0.0, options.tolerance_px) * view.ns_per_px();
  const size_t j = size_t(std::lower_bound(level.ends.begin(), level.ends.end(), t) - level.ends.begin());
  if (j < level.size() && level.starts[j] <= t) return EventRef{track, level_index, uint32_t(j)};

  constexpr double kNone = std::numeric_limits<double>::infinity();
  const double before = j > 0 ? double(t - level.ends[j - 1]) : kNone;
  const double after = j < level.size() ? double(level.starts[j] - t) : kNone;
  if (std::min(before, after) > tolerance) return std::nullopt;
  return EventRef{track, level_index, uint32_t(before <= after ? j - 1 : j)};
}

}  // namespace rt::viz
