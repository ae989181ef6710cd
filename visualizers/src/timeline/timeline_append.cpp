// TimelineModel::append: the model follows its data as a live session grows (rt/viz/timeline.h).
#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/timeline.h"
#include "timeline/track_builder.h"
#include "timeline/track_tail.h"

namespace rt::viz {

namespace {

void check_continues(const char* what, size_t growth, size_t model, size_t data) {
  if (growth != model)
    throw ValueError(
        fmt::format("TimelineModel::append: the growth's first new {} is {}, but the model holds {}: "
                    "give append() every growth of the data it was built from, in order",
                    what, growth, model));
  if (data < growth)
    throw ValueError(fmt::format("TimelineModel::append: the growth starts at {} {} but the data holds only {}", what,
                                 growth, data));
}

}  // namespace

void TimelineModel::append(const prof::SessionGrowth& growth) {
  const prof::SessionData& d = *data_;
  check_continues("op", growth.ops, op_events_.size(), d.ops.size());
  check_continues("GPU activity", growth.gpu, gpu_events_.size(), d.gpu.size());
  check_continues("counter sample", growth.counters, counters_seen_, d.counters.size());
  if (growth.steps > steps_seen_ || growth.steps > d.steps.size())
    throw ValueError(
        fmt::format("TimelineModel::append: the growth's first new step is {}, but the model holds {} "
                    "steps and the data {}",
                    growth.steps, steps_seen_, d.steps.size()));
  const bool steps_changed = growth.steps != steps_seen_ || d.steps.size() != steps_seen_;
  check_continues("collective", growth.collectives, collectives_seen_, d.collectives.size());

  append_intervals(growth);
  append_counters(growth);
  if (steps_changed) append_steps();
  if (d.collectives.size() != collectives_seen_) append_collectives();

  // Threads may have been named since (a ThreadRecord arrives with a thread's first flushed records).
  std::unordered_map<uint64_t, const prof::ThreadRecord*> records;
  for (const prof::ThreadRecord& r : d.threads) records.emplace(r.thread, &r);
  repairs_.unknown_thread_events = 0;
  for (Track& t : tracks_) {
    if (t.id.kind != TrackKind::Thread) continue;
    const auto it = records.find(t.id.key);
    if (it == records.end()) repairs_.unknown_thread_events += t.event_count();
    t.name = thread_track_name(d, t.id.key, it == records.end() ? nullptr : it->second);
  }

  std::vector<uint32_t> order(tracks_.size());
  std::iota(order.begin(), order.end(), uint32_t(0));
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return displayed_before(tracks_[a], tracks_[b]); });
  if (!std::is_sorted(order.begin(), order.end())) {
    std::vector<Track> tracks;
    std::vector<uint32_t> slots;
    tracks.reserve(tracks_.size());
    slots.reserve(tracks_.size());
    for (uint32_t p : order) {
      tracks.push_back(std::move(tracks_[p]));
      slots.push_back(slot_of_[p]);
    }
    tracks_ = std::move(tracks);
    slot_of_ = std::move(slots);
  }
  finish_tracks();
}

void TimelineModel::append_intervals(const prof::SessionGrowth& growth) {
  const prof::SessionData& d = *data_;
  op_events_.resize(d.ops.size(), kNotDrawn);
  gpu_events_.resize(d.gpu.size(), kNotDrawn);
  std::map<std::pair<TrackKind, std::pair<uint64_t, int64_t>>, std::vector<TrackRecord>> added;
  auto key = [](const TrackId& id) { return std::pair(id.kind, std::pair(id.key, id.sub)); };
  for (size_t i = growth.ops; i < d.ops.size(); ++i)
    added[key({TrackKind::Thread, d.ops[i].thread, 0})].push_back({uint32_t(i), EventSource::Op});
  for (size_t i = growth.gpu; i < d.gpu.size(); ++i) {
    const prof::GpuActivityRecord& g = d.gpu[i];
    if (on_thread_track(g.kind))
      added[key({TrackKind::Thread, g.thread, 0})].push_back({uint32_t(i), EventSource::Gpu});
    if (on_stream_track(g.kind))
      added[key({TrackKind::GpuStream, uint64_t(uint32_t(g.device)), g.stream})].push_back(
          {uint32_t(i), EventSource::Gpu});
  }
  if (added.empty()) return;

  std::map<std::pair<TrackKind, std::pair<uint64_t, int64_t>>, size_t> position;
  for (size_t p = 0; p < tracks_.size(); ++p) position.emplace(key(tracks_[p].id), p);
  TailRepairs repairs;
  std::vector<PlacedEvent> placed;
  for (const auto& [k, records] : added) {
    auto it = position.find(k);
    if (it == position.end()) {
      Track t;
      t.id = {k.first, k.second.first, k.second.second};
      if (k.first == TrackKind::GpuStream)
        t.name = stream_track_name(d, int32_t(uint32_t(t.id.key)), int32_t(t.id.sub));  // threads: named below
      it = position.emplace(k, tracks_.size()).first;
      tracks_.push_back(std::move(t));
      slot_of_.push_back(uint32_t(position_of_.size()));
      position_of_.push_back(uint32_t(tracks_.size() - 1));
    }
    placed.clear();
    renest_tail(tracks_[it->second], d, records, growth.ops, growth.gpu, repairs, placed);
    const uint32_t slot = slot_of_[it->second];
    for (const PlacedEvent& e : placed) {
      auto& index = e.record.second == EventSource::Op ? op_events_ : gpu_events_;
      index[e.record.first] = {slot, e.level, e.index};
    }
  }
  repairs_.end_before_start += repairs.end_before_start;
  repairs_.overlaps = repairs_.overlaps + repairs.clamped_after - repairs.clamped_before;
}

void TimelineModel::append_counters(const prof::SessionGrowth& growth) {
  const prof::SessionData& d = *data_;
  std::map<std::string, std::vector<uint32_t>> added;
  for (size_t i = growth.counters; i < d.counters.size(); ++i)
    added[d.strings.at(d.counters[i].name)].push_back(uint32_t(i));
  counters_seen_ = d.counters.size();
  for (const auto& [name, samples] : added) {
    auto it = std::find_if(tracks_.begin(), tracks_.end(),
                           [&](const Track& t) { return t.id.kind == TrackKind::Counter && t.name == name; });
    if (it == tracks_.end()) {
      Track t;
      t.id = {TrackKind::Counter, counter_track_key(name), 0};
      t.name = name;
      tracks_.push_back(std::move(t));
      slot_of_.push_back(uint32_t(position_of_.size()));
      position_of_.push_back(uint32_t(tracks_.size() - 1));
      it = tracks_.end() - 1;
    }
    merge_counter_samples(*it, d, samples);
  }
}

void TimelineModel::append_steps() {
  const prof::SessionData& d = *data_;
  repairs_.end_before_start -= repairs_.step_end_before_start;
  repairs_.overlaps -= repairs_.step_overlaps;
  BuiltTracks built;
  add_step_track(d, built);
  repairs_.end_before_start += built.step_end_before_start;
  repairs_.overlaps += built.step_overlaps;
  repairs_.step_end_before_start = built.step_end_before_start;
  repairs_.step_overlaps = built.step_overlaps;
  steps_seen_ = d.steps.size();

  const auto it =
      std::find_if(tracks_.begin(), tracks_.end(), [](const Track& t) { return t.id.kind == TrackKind::Steps; });
  if (it == tracks_.end()) {
    if (built.tracks.empty()) return;
    tracks_.push_back(std::move(built.tracks.front()));
    slot_of_.push_back(uint32_t(position_of_.size()));
    position_of_.push_back(uint32_t(tracks_.size() - 1));
  } else if (built.tracks.empty()) {  // steps are not indexed by slot: nothing else names the track
    const auto p = size_t(it - tracks_.begin());
    tracks_.erase(it);
    slot_of_.erase(slot_of_.begin() + ptrdiff_t(p));
  } else {
    *it = std::move(built.tracks.front());
  }
}

// Collectives arrive a few per step: their tracks are rebuilt whole, each keeping its slot (only the
// collective tracks name themselves by id; no index refers to their slots).
void TimelineModel::append_collectives() {
  const prof::SessionData& d = *data_;
  BuiltTracks built;
  add_collective_tracks(d, built);
  collectives_seen_ = d.collectives.size();
  for (Track& t : built.tracks) {
    const auto it = std::find_if(tracks_.begin(), tracks_.end(), [&](const Track& k) { return k.id == t.id; });
    if (it != tracks_.end()) {
      *it = std::move(t);
      continue;
    }
    tracks_.push_back(std::move(t));
    slot_of_.push_back(uint32_t(position_of_.size()));
    position_of_.push_back(uint32_t(tracks_.size() - 1));
  }
}

}  // namespace rt::viz
