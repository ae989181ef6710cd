#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/timeline_select.h"

namespace rt::viz {

namespace {

struct Totals {
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
};

int64_t clipped(int64_t start, int64_t end, int64_t t0, int64_t t1) {
  return std::max<int64_t>(0, std::min(end, t1) - std::max(start, t0));
}

prof::StringId name_of(const prof::SessionData& d, const TrackLevel& level, size_t i) {
  return level.sources[i] == EventSource::Op ? d.ops[level.records[i]].name : d.gpu[level.records[i]].name;
}

void add_track(const prof::SessionData& d, const Track& track, int64_t t0, int64_t t1,
               std::unordered_map<prof::StringId, Totals>& by_name) {
  for (size_t l = 0; l < track.levels.size(); ++l) {
    const TrackLevel& level = track.levels[l];
    const TrackLevel* children = l + 1 < track.levels.size() ? &track.levels[l + 1] : nullptr;
    size_t i = size_t(std::lower_bound(level.ends.begin(), level.ends.end(), t0) - level.ends.begin());
    const size_t last = size_t(std::upper_bound(level.starts.begin(), level.starts.end(), t1) - level.starts.begin());
    size_t c = 0;
    if (children && i < last)
      c = size_t(std::lower_bound(children->starts.begin(), children->starts.end(), level.starts[i]) -
                 children->starts.begin());
    for (; i < last; ++i) {
      const int64_t start = level.starts[i], end = level.ends[i];
      const int64_t total = clipped(start, end, t0, t1);
      int64_t self = total;
      if (children) {
        while (c < children->size() && children->starts[c] < start) ++c;
        for (; c < children->size() && children->starts[c] <= end && children->ends[c] <= end; ++c)
          self -= clipped(children->starts[c], children->ends[c], t0, t1);
      }
      Totals& row = by_name[name_of(d, level, i)];
      ++row.count;
      row.total_ns += total;
      row.self_ns += std::max<int64_t>(self, 0);
    }
  }
}

}  // namespace

std::vector<RangeRow> range_stats(const TimelineModel& model, int64_t t0, int64_t t1, std::span<const uint32_t> tracks) {
  if (t1 < t0) throw ValueError(fmt::format("range_stats: t1 ({}) is before t0 ({})", t1, t0));
  const prof::SessionData& d = model.data();
  std::unordered_map<prof::StringId, Totals> by_name;
  auto counts = [&](uint32_t t) {
    const TrackKind k = model.tracks().at(t).id.kind;
    return k == TrackKind::Thread || k == TrackKind::GpuStream;
  };
  if (tracks.empty()) {
    for (uint32_t t = 0; t < model.tracks().size(); ++t)
      if (counts(t)) add_track(d, model.tracks()[t], t0, t1, by_name);
  } else {
    for (uint32_t t : tracks)
      if (counts(t)) add_track(d, model.tracks()[t], t0, t1, by_name);
  }
  std::vector<RangeRow> rows;
  rows.reserve(by_name.size());
  for (const auto& [name, totals] : by_name)
    rows.push_back({d.strings.at(name), totals.count, totals.total_ns, totals.self_ns});
  std::sort(rows.begin(), rows.end(), [](const RangeRow& a, const RangeRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return rows;
}

}  // namespace rt::viz
