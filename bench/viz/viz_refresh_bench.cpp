// viz_refresh_bench — what a live view's refresh costs (issue 20): sessions of N recorded events, then refreshes of
// M new events each. For the timeline, memory timeline and scalar view models: the model built from the whole
// session, which is what every refresh did before, against the model appended to (append_delta + ::append). For
// the profiler: a recording Session read whole (snapshot()) against read since the last read (snapshot_since +
// append_delta). Prints one table; the medians of the refreshes. Nothing to compare with (PyTorch has no live view).
//
//   build/bin/viz_refresh_bench                                   # N = 100k and 1M, M = 1k and 10k, 5 refreshes
//   build/bin/viz_refresh_bench --sizes 100000 --new 1000 --refreshes 3
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "rt/prof/record_function.h"
#include "rt/prof/session.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/memory_timeline.h"
#include "rt/viz/scalars.h"
#include "rt/viz/timeline.h"
#include "test_timeline_fixtures.h"

namespace {

using namespace rt::viz;
using rt::prof::SessionData;
using rt::prof::SessionDelta;
using rt::prof::SessionGrowth;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Row {
  std::string view;
  size_t events = 0;
  size_t added = 0;
  double full_ms = 0;
  double append_ms = 0;
  std::string note;
};

std::vector<size_t> parse_list(const char* text) {
  std::vector<size_t> out;
  for (const char* p = text; *p;) {
    out.push_back(std::stoul(p));
    p = std::strchr(p, ',');
    if (!p) break;
    ++p;
  }
  return out;
}

// A finished session handed over the way a live view reads it: a base holding everything that ended before a
// cut, then one delta per refresh with what ended since (an op arrives when it ends, after its children), each
// kind sorted as the session sorts a read, with the step still open at the cut replaced at every read.
class LiveSplit {
 public:
  LiveSplit(const SessionData& all, std::vector<int64_t> cuts) : all_(all), cuts_(std::move(cuts)) {}

  SessionData base() const {
    SessionData d;
    d.name = all_.name;
    d.start_ns = all_.start_ns;
    d.strings = all_.strings;
    d.threads = all_.threads;
    fill(d, INT64_MIN, cuts_.front());
    add_steps(d, INT64_MIN, cuts_.front());
    return d;
  }

  size_t refreshes() const { return cuts_.size() - 1; }

  SessionDelta delta(size_t refresh) const {
    SessionDelta delta;
    const int64_t from = cuts_[refresh], to = cuts_[refresh + 1];
    fill(delta.records, from, to);
    delta.records.name = all_.name;
    delta.records.start_ns = all_.start_ns;
    delta.records.threads = all_.threads;
    delta.first_new_string = rt::prof::StringId(all_.strings.size());
    delta.replaces_open_step = open_at(from);
    add_steps(delta.records, from, to);
    return delta;
  }

 private:
  void fill(SessionData& d, int64_t from, int64_t to) const {
    auto in = [&](int64_t t) { return t > from && t <= to; };
    for (const auto& r : all_.ops)
      if (in(r.end_ns)) d.ops.push_back(r);
    for (const auto& r : all_.gpu)
      if (in(r.end_ns)) d.gpu.push_back(r);
    for (const auto& r : all_.memory)
      if (in(r.time_ns)) d.memory.push_back(r);
    for (const auto& r : all_.counters)
      if (in(r.time_ns)) d.counters.push_back(r);
    std::stable_sort(d.ops.begin(), d.ops.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    std::stable_sort(d.gpu.begin(), d.gpu.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  }
  bool open_at(int64_t t) const {
    return std::any_of(all_.steps.begin(), all_.steps.end(),
                       [&](const auto& s) { return s.start_ns <= t && s.end_ns > t; });
  }
  // The steps that closed in (from, to], then the one still open at `to`, ending there.
  void add_steps(SessionData& d, int64_t from, int64_t to) const {
    for (const auto& s : all_.steps)
      if (s.end_ns > from && s.end_ns <= to) d.steps.push_back(s);
    for (auto s : all_.steps)
      if (s.start_ns <= to && s.end_ns > to) {
        s.end_ns = to;
        d.steps.push_back(s);
      }
  }

  const SessionData& all_;
  std::vector<int64_t> cuts_;
};

// Times that leave `added` records of `times` (sorted) after each cut: the base holds the rest.
std::vector<int64_t> cuts_for(std::vector<int64_t> times, size_t added, size_t refreshes) {
  std::sort(times.begin(), times.end());
  std::vector<int64_t> cuts;
  for (size_t k = refreshes + 1; k-- > 0;) cuts.push_back(times[times.size() - 1 - k * added]);
  return cuts;
}

// Appends every refresh of `split` to a model built on its base; the full rebuild builds on the same grown data.
template <typename Model>
Row measure(const char* view, const LiveSplit& split, size_t events, size_t added,
            const std::function<std::unique_ptr<Model>(const std::shared_ptr<SessionData>&)>& build,
            const std::function<void(Model&, const SessionData&, const SessionGrowth&)>& append,
            const std::function<size_t(const Model&)>& size_of) {
  auto live = std::make_shared<SessionData>(split.base());
  std::unique_ptr<Model> model = build(live);
  std::vector<double> full, appended, deltas;
  for (size_t k = 0; k < split.refreshes(); ++k) {
    SessionDelta delta = split.delta(k);
    auto t = Clock::now();
    const SessionGrowth growth = rt::prof::append_delta(*live, std::move(delta));
    deltas.push_back(ms_since(t));
    t = Clock::now();
    append(*model, *live, growth);
    appended.push_back(ms_since(t));
    t = Clock::now();
    const std::unique_ptr<Model> rebuilt = build(live);
    full.push_back(ms_since(t));
    if (size_of(*rebuilt) != size_of(*model)) std::fprintf(stderr, "%s: the appended model differs!\n", view);
  }
  char note[160];
  std::snprintf(note, sizeof note, "append_delta %.3f ms of it", median(deltas));
  return {view, events, added, median(full), median(appended) + median(deltas), note};
}

Row timeline_row(size_t n, size_t added, size_t refreshes) {
  const auto all = fixtures::generate_session({.ops = n, .threads = 2, .max_depth = 6, .seed = 1});
  std::vector<int64_t> ends;
  for (const auto& op : all->ops) ends.push_back(op.end_ns);
  const LiveSplit split(*all, cuts_for(ends, added, refreshes));
  return measure<TimelineModel>(
      "timeline", split, all->ops.size() + all->gpu.size(), added,
      [](const std::shared_ptr<SessionData>& d) { return std::make_unique<TimelineModel>(d); },
      [](TimelineModel& m, const SessionData&, const SessionGrowth& g) { m.append(g); },
      [](const TimelineModel& m) { return m.event_count(); });
}

Row memory_row(size_t n, size_t added, size_t refreshes) {
  SessionData all = fixtures::generate_memory(n, 2, false);
  std::vector<int64_t> times;
  for (const auto& m : all.memory) times.push_back(m.time_ns);
  const LiveSplit split(all, cuts_for(times, added, refreshes));
  return measure<MemoryTimelineModel>(
      "memory timeline", split, all.memory.size(), added,
      [](const std::shared_ptr<SessionData>& d) { return std::make_unique<MemoryTimelineModel>(*d); },
      [](MemoryTimelineModel& m, const SessionData& d, const SessionGrowth& g) { m.append(d, g); },
      [](const MemoryTimelineModel& m) { return m.blocks().size(); });
}

Row scalars_row(size_t n, size_t added, size_t refreshes) {
  SessionData all;
  const auto loss = all.strings.intern("loss"), lr = all.strings.intern("lr");
  for (size_t i = 0; i < n; ++i) {
    const auto t = int64_t(i) * 1000 + 1;
    all.counters.push_back({t, i % 4 ? loss : lr, 1.0 / double(i + 1)});
    if (i % 1000 == 0) all.steps.push_back({int64_t(i / 1000), t - 1, t - 1 + 1000 * 1000});
  }
  std::vector<int64_t> times;
  for (const auto& c : all.counters) times.push_back(c.time_ns);
  const LiveSplit split(all, cuts_for(times, added, refreshes));
  return measure<ScalarSet>(
      "scalars", split, all.counters.size(), added,
      [](const std::shared_ptr<SessionData>& d) { return std::make_unique<ScalarSet>(*d); },
      [](ScalarSet& s, const SessionData& d, const SessionGrowth& g) { s.append(d, g); },
      [](const ScalarSet& s) { return s.find("loss")->size(); });
}

// A real recording session: N user ranges (one outer range per 100), then refreshes of M more; snapshot() copies
// and sorts everything, snapshot_since() + append_delta only what is new (both drain the thread's buffer first).
Row session_row(size_t n, size_t added, size_t refreshes) {
  rt::prof::SessionOptions options;
  options.cupti = rt::prof::CuptiMode::Off;
  rt::prof::Session session(options);
  session.start();
  auto record = [](size_t count) {
    for (size_t i = 0; i < count; i += 100) {
      rt::prof::RecordFunction outer("iteration");
      for (size_t k = 1; k < 100 && i + k < count; ++k) {
        rt::prof::RecordFunction inner("op");
      }
    }
  };
  record(n);
  SessionDelta first = session.snapshot_since({});
  rt::prof::SnapshotCursor cursor = first.cursor;
  SessionData reader = std::move(first.records);
  std::vector<double> full, appended;
  for (size_t k = 0; k < refreshes; ++k) {
    record(added);
    auto t = Clock::now();
    SessionDelta delta = session.snapshot_since(cursor);
    cursor = delta.cursor;
    rt::prof::append_delta(reader, std::move(delta));
    appended.push_back(ms_since(t));
    t = Clock::now();
    const SessionData whole = session.snapshot();
    full.push_back(ms_since(t));
    if (whole.ops.size() != reader.ops.size()) std::fprintf(stderr, "session read: the reader lost records!\n");
  }
  session.stop();
  return {"live Session read", n, added, median(full), median(appended), "snapshot() vs snapshot_since + append_delta"};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes{100'000, 1'000'000};
  std::vector<size_t> news{1'000, 10'000};
  size_t refreshes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--sizes")) sizes = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--new")) news = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--refreshes")) refreshes = std::max<size_t>(1, std::stoul(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: viz_refresh_bench [--sizes N,N...] [--new M,M...] [--refreshes R]\n");
      return 2;
    }
  }
  std::vector<Row> rows;
  for (size_t n : sizes)
    for (size_t m : news) {
      std::fprintf(stderr, "session of %zu, refreshes of %zu...\n", n, m);
      rows.push_back(timeline_row(n, m, refreshes));
      rows.push_back(memory_row(n, m, refreshes));
      rows.push_back(scalars_row(n, m, refreshes));
      rows.push_back(session_row(n, m, refreshes));
    }
  std::printf("\n| %-18s | %9s | %7s | %12s | %10s | %8s | %s\n", "refresh of", "events", "new", "full ms", "append ms",
              "full/app", "notes");
  std::printf("|%s|%s|%s|%s|%s|%s|%s\n", std::string(20, '-').c_str(), std::string(11, '-').c_str(),
              std::string(9, '-').c_str(), std::string(14, '-').c_str(), std::string(12, '-').c_str(),
              std::string(10, '-').c_str(), std::string(12, '-').c_str());
  for (const Row& r : rows)
    std::printf("| %-18s | %9zu | %7zu | %12.3f | %10.3f | %8.0f | %s\n", r.view.c_str(), r.events, r.added, r.full_ms,
                r.append_ms, r.full_ms / std::max(r.append_ms, 1e-6), r.note.c_str());
  return 0;
}
