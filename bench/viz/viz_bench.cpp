// viz_bench — the timeline, memory timeline and scalar view models on large sessions (issue 6 target:
// a timeline frame <= 16 ms with 1M events, zoomed out and zoomed in). Prints one table of figures;
// nothing to compare with (PyTorch has no such view model).
//
//   build/bin/viz_bench                      # 1M ops, 1M memory events, 1M counter samples
//   build/bin/viz_bench --events 200000 --frames 20 --width 1280
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rt/viz/memory_timeline.h"
#include "rt/viz/scalars.h"
#include "rt/viz/timeline_flows.h"
#include "rt/viz/timeline_lod.h"
#include "rt/viz/timeline_select.h"
#include "test_timeline_fixtures.h"

namespace {

using namespace rt::viz;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Row {
  std::string what;
  double ms = 0;
  std::string note;
};

struct FrameTimes {
  double median = 0;
  double worst = 0;
  size_t items = 0;
};

template <typename Fn>
FrameTimes time_frames(int frames, Fn&& frame) {
  std::vector<double> ms;
  size_t items = 0;
  for (int i = 0; i < frames; ++i) {
    const auto t0 = Clock::now();
    items = frame(i);
    ms.push_back(ms_since(t0));
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.back(), items};
}

size_t item_count(const TimelineFrame& f) {
  size_t n = 0;
  for (const TrackFrame& t : f.tracks) {
    for (const LevelFrame& l : t.levels) n += l.items.size();
    n += t.counter.size();
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  size_t events = 1'000'000;
  int frames = 50;
  double width = 1920;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--events")) events = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--frames")) frames = std::max(1, std::stoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--width")) width = std::stod(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: viz_bench [--events N] [--frames F] [--width PX]\n");
      return 2;
    }
  }
  std::vector<Row> rows;
  char note[160];

  auto t = Clock::now();
  const auto data = fixtures::generate_session({.ops = events, .threads = 2, .max_depth = 6, .seed = 1});
  std::printf("session: %zu ops, %zu GPU activities, %zu steps (generated in %.0f ms)\n", data->ops.size(),
              data->gpu.size(), data->steps.size(), ms_since(t));

  t = Clock::now();
  const TimelineModel model(data);
  std::snprintf(note, sizeof note, "%zu tracks, %zu events", model.tracks().size(), model.event_count());
  rows.push_back({"timeline model build", ms_since(t), note});

  TimelineView view;
  view.set_extent(model.first_ns(), model.last_ns());
  view.set_width(width);
  TimelineFrame frame;
  std::mt19937_64 rng(3);
  const struct { const char* name; double zoom; } zooms[] = {
      {"frame, zoomed out (fit all)", 1.0}, {"frame, zoomed in 100x", 100.0}, {"frame, zoomed in 1e5x", 1e5}};
  for (const auto& z : zooms) {
    const FrameTimes ft = time_frames(frames, [&](int i) {
      view.fit_all();
      view.zoom(z.zoom, double(rng() % uint64_t(width)));
      build_frame(model, view, frame);
      return item_count(frame);
    });
    std::snprintf(note, sizeof note, "median; worst %.3f ms; %zu items; target <= 16 ms", ft.worst, ft.items);
    rows.push_back({z.name, ft.median, note});
  }

  view.fit_all();
  const FrameTimes hits = time_frames(frames, [&](int) {
    size_t found = 0;
    for (int k = 0; k < 1000; ++k)
      found += hit_test(model, uint32_t(1 + rng() % 2), double(rng() % uint64_t(width)), double(rng() % 120), view)
                   ? 1 : 0;
    return found;
  });
  rows.push_back({"1000 hit tests", hits.median, "median"});

  t = Clock::now();
  const FlowIndex flows(model);
  std::snprintf(note, sizeof note, "%zu flows", flows.all().size());
  rows.push_back({"flow index build", ms_since(t), note});
  std::vector<Flow> visible;
  const FrameTimes flow_frames = time_frames(frames, [&](int) {
    flows.in_window(view.t0(), view.t1(), visible);
    return visible.size();
  });
  std::snprintf(note, sizeof note, "median, zoomed out; %zu flows", flow_frames.items);
  rows.push_back({"flows in window", flow_frames.median, note});

  t = Clock::now();
  EventSearch search(model, "ADDMM");
  std::snprintf(note, sizeof note, "%zu matches", search.matches().size());
  rows.push_back({"search \"ADDMM\"", ms_since(t), note});

  t = Clock::now();
  const auto stats = range_stats(model, model.first_ns(), model.last_ns());
  std::snprintf(note, sizeof note, "%zu names, whole session", stats.size());
  rows.push_back({"range statistics", ms_since(t), note});

  t = Clock::now();
  const rt::prof::SessionData memory_data = fixtures::generate_memory(events, 2, false);
  const double generated = ms_since(t);
  t = Clock::now();
  const MemoryTimelineModel memory(memory_data);
  std::snprintf(note, sizeof note, "%zu events, %zu blocks (generated in %.0f ms)", memory_data.memory.size(),
                memory.blocks().size(), generated);
  rows.push_back({"memory timeline build", ms_since(t), note});
  const DeviceMemory& cpu = memory.devices().front();
  std::vector<MemoryColumn> columns;
  const FrameTimes memory_frames = time_frames(frames, [&](int) {
    memory.columns(cpu.device, cpu.times.front(), cpu.times.back(), width, columns);
    return columns.size();
  });
  std::snprintf(note, sizeof note, "median, zoomed out; worst %.3f ms", memory_frames.worst);
  rows.push_back({"memory frame", memory_frames.median, note});
  t = Clock::now();
  const MemoryBlock* under_peak = memory.blocks().hit_test(cpu.device, cpu.peak.time_ns, cpu.peak.total / 2);
  rows.push_back({"memory hit test at the peak", ms_since(t), under_peak ? "found" : "none"});

  rt::prof::SessionData scalar_data;
  const rt::prof::StringId loss = scalar_data.strings.intern("loss");
  for (size_t i = 0; i < events; ++i)
    scalar_data.counters.push_back({int64_t(i) * 1000, loss, 1.0 / double(i + 1) + double(rng() % 100) * 1e-4});
  t = Clock::now();
  const ScalarSet scalars(scalar_data);
  rows.push_back({"scalar set build", ms_since(t), "1 series"});
  const ScalarSeries& series = *scalars.find("loss");
  t = Clock::now();
  const std::vector<double> smoothed = smooth(series.value, 0.6);
  rows.push_back({"smoothing", ms_since(t), "weight 0.6"});
  std::vector<ScalarColumn> scalar_columns;
  const FrameTimes scalar_frames = time_frames(frames, [&](int) {
    downsample(series.time_ns, smoothed, series.time_ns.front(), series.time_ns.back(), width, scalar_columns);
    return scalar_columns.size();
  });
  rows.push_back({"scalar downsample", scalar_frames.median, "median, zoomed out"});

  std::printf("\n| %-30s | %10s | %s\n", "view model (events: see above)", "ms", "notes");
  std::printf("|%s|%s|%s\n", std::string(32, '-').c_str(), std::string(12, '-').c_str(), std::string(20, '-').c_str());
  for (const Row& r : rows) std::printf("| %-30s | %10.3f | %s\n", r.what.c_str(), r.ms, r.note.c_str());
  return 0;
}
