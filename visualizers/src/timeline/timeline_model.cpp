#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/timeline.h"
#include "timeline/track_builder.h"

namespace rt::viz {

size_t Track::event_count() const {
  size_t n = counter_samples.size();
  for (const TrackLevel& level : levels) n += level.size();
  return n;
}

std::string TimelineWarning::text() const {
  switch (kind) {
    case TimelineWarningKind::EndBeforeStart:
      return fmt::format("{} event{} ending before {} start repaired", count, count == 1 ? "" : "s",
                         count == 1 ? "its" : "their");
    case TimelineWarningKind::Overlap:
      return fmt::format("{} overlapping event{} repaired", count, count == 1 ? "" : "s");
    case TimelineWarningKind::UnknownThread:
      return fmt::format("{} event{} on threads without a thread record", count, count == 1 ? "" : "s");
  }
  return {};
}

TimelineModel::TimelineModel(std::shared_ptr<const prof::SessionData> data) : data_(std::move(data)) {
  if (!data_) throw ValueError("TimelineModel: the session data is null");
  BuiltTracks built = build_tracks(*data_);
  tracks_ = std::move(built.tracks);
  repairs_ = {built.end_before_start, built.overlaps, built.step_end_before_start, built.step_overlaps,
              built.unknown_thread_events};
  counters_seen_ = data_->counters.size();
  steps_seen_ = data_->steps.size();
  collectives_seen_ = data_->collectives.size();
  slot_of_.resize(tracks_.size());
  std::iota(slot_of_.begin(), slot_of_.end(), uint32_t(0));
  op_events_.assign(data_->ops.size(), kNotDrawn);
  gpu_events_.assign(data_->gpu.size(), kNotDrawn);
  for (uint32_t t = 0; t < tracks_.size(); ++t) {
    for (uint32_t l = 0; l < tracks_[t].levels.size(); ++l) {
      const TrackLevel& level = tracks_[t].levels[l];
      for (uint32_t i = 0; i < level.size(); ++i) {
        if (level.sources[i] == EventSource::Op) op_events_[level.records[i]] = {t, l, i};
        if (level.sources[i] == EventSource::Gpu) gpu_events_[level.records[i]] = {t, l, i};
      }
    }
  }
  finish_tracks();
}

void TimelineModel::finish_tracks() {
  position_of_.assign(position_of_.size(), UINT32_MAX);
  for (uint32_t p = 0; p < tracks_.size(); ++p) {
    if (position_of_.size() <= slot_of_[p]) position_of_.resize(slot_of_[p] + 1, UINT32_MAX);
    position_of_[slot_of_[p]] = p;
  }
  warnings_.clear();
  const std::pair<TimelineWarningKind, size_t> counts[] = {
      {TimelineWarningKind::EndBeforeStart, repairs_.end_before_start},
      {TimelineWarningKind::Overlap, repairs_.overlaps},
      {TimelineWarningKind::UnknownThread, repairs_.unknown_thread_events}};
  for (const auto& [kind, count] : counts)
    if (count > 0) warnings_.push_back({kind, count});
  event_count_ = 0;
  first_ns_ = last_ns_ = 0;
  bool any = false;
  for (const Track& track : tracks_) {
    const size_t events = track.event_count();
    event_count_ += events;
    if (events == 0) continue;
    first_ns_ = any ? std::min(first_ns_, track.first_ns) : track.first_ns;
    last_ns_ = any ? std::max(last_ns_, track.last_ns) : track.last_ns;
    any = true;
  }
}

std::optional<size_t> TimelineModel::find_track(const TrackId& id) const {
  for (size_t t = 0; t < tracks_.size(); ++t)
    if (tracks_[t].id == id) return t;
  return std::nullopt;
}

const TrackLevel& TimelineModel::level_of(const EventRef& e) const {
  if (e.track >= tracks_.size() || e.level >= tracks_[e.track].levels.size() ||
      e.index >= tracks_[e.track].levels[e.level].size())
    throw IndexError(fmt::format("TimelineModel: no event at track {}, level {}, index {}", e.track, e.level, e.index));
  return tracks_[e.track].levels[e.level];
}

int64_t TimelineModel::start_ns(const EventRef& e) const { return level_of(e).starts[e.index]; }
int64_t TimelineModel::end_ns(const EventRef& e) const { return level_of(e).ends[e.index]; }
EventSource TimelineModel::source(const EventRef& e) const { return level_of(e).sources[e.index]; }
uint32_t TimelineModel::record(const EventRef& e) const { return level_of(e).records[e.index]; }

std::string TimelineModel::name(const EventRef& e) const {
  const TrackLevel& level = level_of(e);
  const uint32_t r = level.records[e.index];
  switch (level.sources[e.index]) {
    case EventSource::Op: return data_->strings.at(data_->ops[r].name);
    case EventSource::Gpu: return data_->strings.at(data_->gpu[r].name);
    case EventSource::Step: return fmt::format("step {}", data_->steps[r].step);
    case EventSource::Collective: return data_->strings.at(data_->collectives[r].name);
  }
  return {};
}

int64_t TimelineModel::self_ns(const EventRef& e) const {
  const TrackLevel& level = level_of(e);
  const int64_t start = level.starts[e.index];
  const int64_t end = level.ends[e.index];
  int64_t self = end - start;
  if (level.sources[e.index] == EventSource::Collective) return self;  // lanes, not children
  const auto& levels = tracks_[e.track].levels;
  if (e.level + 1 >= levels.size()) return self;
  const TrackLevel& children = levels[e.level + 1];
  auto j = size_t(std::lower_bound(children.starts.begin(), children.starts.end(), start) - children.starts.begin());
  for (; j < children.size() && children.starts[j] <= end; ++j)
    if (children.ends[j] <= end) self -= children.ends[j] - children.starts[j];
  return std::max<int64_t>(self, 0);
}

std::optional<EventRef> TimelineModel::find(EventSource source, uint32_t record) const {
  const std::vector<EventRef>* index = source == EventSource::Op ? &op_events_
                                       : source == EventSource::Gpu ? &gpu_events_ : nullptr;
  if (index) {
    if (record >= index->size() || (*index)[record].track == UINT32_MAX) return std::nullopt;
    EventRef e = (*index)[record];
    e.track = position_of_[e.track];
    return e;
  }
  const TrackKind kind = source == EventSource::Step ? TrackKind::Steps : TrackKind::Collectives;
  for (uint32_t t = 0; t < tracks_.size(); ++t) {
    if (tracks_[t].id.kind != kind) continue;
    for (uint32_t l = 0; l < tracks_[t].levels.size(); ++l) {
      const TrackLevel& level = tracks_[t].levels[l];
      for (uint32_t i = 0; i < level.size(); ++i)
        if (level.records[i] == record) return EventRef{t, l, i};
    }
  }
  return std::nullopt;
}

}  // namespace rt::viz
