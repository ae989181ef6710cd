#include "timeline/track_builder.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "rt/prof/nesting.h"

namespace rt::viz {

namespace {

// One track's events: slices for rt::prof::nest_slices, whose index is a position in `events`.
struct TrackEvents {
  std::vector<prof::NestedSlice> slices;
  std::vector<std::pair<uint32_t, EventSource>> events;  // (record, source)
  void add(prof::NestedSlice slice, EventSource source) {
    events.emplace_back(slice.index, source);
    slice.index = uint32_t(events.size() - 1);
    slices.push_back(slice);
  }
};

// Levels by depth from the shared nesting (Note [Nesting clamp] in rt/prof/nesting.h): the slices come
// parent-first, sorted by start, so every level is sorted by start too.
Track interval_track(TrackId id, std::string name, TrackEvents events, BuiltTracks& out) {
  const prof::NestingRepairs repairs = prof::nest_slices(events.slices);
  out.end_before_start += repairs.end_before_start;
  out.overlaps += repairs.clamped;
  Track t;
  t.id = id;
  t.name = std::move(name);
  for (const prof::NestedSlice& s : events.slices) {
    if (t.levels.size() <= size_t(s.depth)) t.levels.resize(size_t(s.depth) + 1);
    TrackLevel& level = t.levels[size_t(s.depth)];
    level.starts.push_back(s.start);
    level.ends.push_back(s.end);
    level.records.push_back(events.events[s.index].first);
    level.sources.push_back(events.events[s.index].second);
  }
  set_extent(t);
  return t;
}

void add_thread_tracks(const prof::SessionData& data, BuiltTracks& out) {
  std::unordered_map<uint64_t, TrackEvents> by_thread;
  for (size_t i = 0; i < data.ops.size(); ++i)
    by_thread[data.ops[i].thread].add(prof::slice_of(data.ops[i], uint32_t(i)), EventSource::Op);
  for (size_t i = 0; i < data.gpu.size(); ++i) {
    const prof::GpuActivityRecord& g = data.gpu[i];
    if (on_thread_track(g.kind)) by_thread[g.thread].add(prof::slice_of(g, uint32_t(i)), EventSource::Gpu);
  }
  std::unordered_map<uint64_t, const prof::ThreadRecord*> records;
  for (const prof::ThreadRecord& r : data.threads) records.emplace(r.thread, &r);

  std::vector<Track> threads;
  for (auto& [thread, events] : by_thread) {
    const auto it = records.find(thread);
    if (it == records.end()) out.unknown_thread_events += events.slices.size();
    std::string name = thread_track_name(data, thread, it == records.end() ? nullptr : it->second);
    threads.push_back(interval_track({TrackKind::Thread, thread, 0}, std::move(name), std::move(events), out));
    if (it != records.end()) threads.back().rank = it->second->rank;
  }
  std::sort(threads.begin(), threads.end(), displayed_before);
  for (Track& t : threads) out.tracks.push_back(std::move(t));
}

// Display order of the kinds: a rank's collectives follow its threads (displayed_before compares ranks first).
int kind_order(TrackKind k) {
  switch (k) {
    case TrackKind::Steps: return 0;
    case TrackKind::Thread: return 1;
    case TrackKind::Collectives: return 2;
    case TrackKind::GpuStream: return 3;
    case TrackKind::Counter: return 4;
  }
  return 5;
}

bool per_rank(TrackKind k) { return k == TrackKind::Thread || k == TrackKind::Collectives; }

void add_stream_tracks(const prof::SessionData& data, BuiltTracks& out) {
  std::map<std::pair<int32_t, int32_t>, TrackEvents> by_stream;
  for (size_t i = 0; i < data.gpu.size(); ++i) {
    const prof::GpuActivityRecord& g = data.gpu[i];
    if (on_stream_track(g.kind)) by_stream[{g.device, g.stream}].add(prof::slice_of(g, uint32_t(i)), EventSource::Gpu);
  }
  for (auto& [key, events] : by_stream) {
    const TrackId id{TrackKind::GpuStream, uint64_t(uint32_t(key.first)), key.second};
    out.tracks.push_back(
        interval_track(id, stream_track_name(data, key.first, key.second), std::move(events), out));
  }
}

void add_counter_tracks(const prof::SessionData& data, BuiltTracks& out) {
  std::map<std::string, std::vector<uint32_t>> by_name;
  for (size_t i = 0; i < data.counters.size(); ++i)
    by_name[data.strings.at(data.counters[i].name)].push_back(uint32_t(i));
  for (auto& [name, samples] : by_name) {
    std::stable_sort(samples.begin(), samples.end(), [&](uint32_t a, uint32_t b) {
      return data.counters[a].time_ns < data.counters[b].time_ns;
    });
    Track t;
    t.id = {TrackKind::Counter, counter_track_key(name), 0};
    t.name = name;
    t.first_ns = data.counters[samples.front()].time_ns;
    t.last_ns = data.counters[samples.back()].time_ns;
    for (uint32_t i : samples) {
      t.counter_times.push_back(data.counters[i].time_ns);
      t.counter_values.push_back(data.counters[i].value);
    }
    t.counter_samples = std::move(samples);
    out.tracks.push_back(std::move(t));
  }
}

}  // namespace

bool on_thread_track(prof::GpuActivityKind k) {
  return k == prof::GpuActivityKind::Runtime || k == prof::GpuActivityKind::Driver;
}

bool on_stream_track(prof::GpuActivityKind k) {
  return k == prof::GpuActivityKind::Kernel || k == prof::GpuActivityKind::Memcpy || k == prof::GpuActivityKind::Memset;
}

void set_extent(Track& t) {
  bool any = false;
  for (const TrackLevel& level : t.levels) {
    if (level.size() == 0) continue;
    const int64_t first = level.starts.front();
    const int64_t last = level.ends.back();  // levels do not overlap: ends are non-decreasing
    t.first_ns = any ? std::min(t.first_ns, first) : first;
    t.last_ns = any ? std::max(t.last_ns, last) : last;
    any = true;
  }
}

bool displayed_before(const Track& a, const Track& b) {
  if (per_rank(a.id.kind) && per_rank(b.id.kind) && a.rank != b.rank) return a.rank < b.rank;
  if (a.id.kind != b.id.kind) return kind_order(a.id.kind) < kind_order(b.id.kind);
  switch (a.id.kind) {
    case TrackKind::Steps: return false;
    case TrackKind::Thread: return a.first_ns != b.first_ns ? a.first_ns < b.first_ns : a.id.key < b.id.key;
    case TrackKind::Collectives: return a.name < b.name;
    case TrackKind::GpuStream:
      return std::pair(int32_t(uint32_t(a.id.key)), a.id.sub) < std::pair(int32_t(uint32_t(b.id.key)), b.id.sub);
    case TrackKind::Counter: return a.name < b.name;
  }
  return false;
}

std::string thread_track_name(const prof::SessionData& data, uint64_t thread, const prof::ThreadRecord* record) {
  std::string name = record ? data.strings.at(record->name) : std::string();
  return name.empty() ? fmt::format("thread {}", thread) : name;
}

void add_step_track(const prof::SessionData& data, BuiltTracks& out) {
  if (data.steps.empty()) return;
  TrackEvents steps;
  for (size_t i = 0; i < data.steps.size(); ++i)
    steps.add(prof::slice_of(data.steps[i], uint32_t(i)), EventSource::Step);
  const size_t end_before_start = out.end_before_start, overlaps = out.overlaps;
  out.tracks.push_back(interval_track({TrackKind::Steps, 0, 0}, "steps", std::move(steps), out));
  out.step_end_before_start += out.end_before_start - end_before_start;
  out.step_overlaps += out.overlaps - overlaps;
}

uint64_t counter_track_key(const std::string& name) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void add_collective_tracks(const prof::SessionData& data, BuiltTracks& out) {
  std::map<std::pair<int32_t, std::string>, std::vector<uint32_t>> by_group;  // (rank, group) -> records
  for (size_t i = 0; i < data.collectives.size(); ++i)
    by_group[{data.collectives[i].rank, data.strings.at(data.collectives[i].group)}].push_back(uint32_t(i));
  for (const auto& [key, records] : by_group) {
    const auto& [rank, group] = key;
    std::vector<prof::CollectiveRecord> subset;
    subset.reserve(records.size());
    for (uint32_t r : records) subset.push_back(data.collectives[r]);
    const std::vector<uint32_t> lanes = prof::pack_collective_lanes(subset);
    Track t;
    t.id = {TrackKind::Collectives, counter_track_key(group), rank};
    t.name = rank >= 0 ? fmt::format("rank {} \u00b7 collectives: {}", rank, group) : "collectives: " + group;
    t.rank = rank;
    std::vector<uint32_t> order(records.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return subset[a].start_ns < subset[b].start_ns; });
    for (uint32_t i : order) {
      if (t.levels.size() <= lanes[i]) t.levels.resize(lanes[i] + 1);
      TrackLevel& level = t.levels[lanes[i]];
      level.starts.push_back(subset[i].start_ns);
      level.ends.push_back(std::max(subset[i].end_ns, subset[i].start_ns));
      level.records.push_back(records[i]);
      level.sources.push_back(EventSource::Collective);
    }
    set_extent(t);
    out.tracks.push_back(std::move(t));
  }
}

BuiltTracks build_tracks(const prof::SessionData& data) {
  BuiltTracks out;
  add_step_track(data, out);
  add_thread_tracks(data, out);
  add_collective_tracks(data, out);
  add_stream_tracks(data, out);
  add_counter_tracks(data, out);
  std::stable_sort(out.tracks.begin(), out.tracks.end(), displayed_before);
  return out;
}

std::string stream_track_name(const prof::SessionData& data, int32_t device, int32_t stream) {
  for (const prof::StreamRecord& s : data.streams)
    if (s.device == device && s.stream == stream && s.name != 0) return data.strings.at(s.name);
  return fmt::format("cuda:{} stream {}", device, stream);
}

}  // namespace rt::viz
