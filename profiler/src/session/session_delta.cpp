#include "rt/prof/session_delta.h"

#include <fmt/format.h>

#include <iterator>

#include "rt/error.h"

namespace rt::prof {

namespace {

bool same_threads(const std::vector<ThreadRecord>& a, const std::vector<ThreadRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].thread != b[i].thread || a[i].os_tid != b[i].os_tid || a[i].name != b[i].name) return false;
  return true;
}

template <typename T>
void append(std::vector<T>& into, std::vector<T>& more) {
  into.insert(into.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

}  // namespace

SessionGrowth append_delta(SessionData& into, SessionDelta&& delta) {
  if (delta.reset)
    throw ValueError(
        "append_delta: the delta is a reset (it holds the whole session, e.g. after stop() sorted "
        "it): replace the data with delta.records instead of appending");
  if (delta.first_new_string != into.strings.size())
    throw ValueError(
        fmt::format("append_delta: the delta's new strings start at id {} but the data holds {} "
                    "strings: it does not hold what this cursor read before (give each reader its "
                    "own data and cursor)",
                    delta.first_new_string, into.strings.size()));
  if (delta.replaces_open_step && into.steps.empty())
    throw ValueError(
        "append_delta: the delta replaces the open step of the previous read, but the data holds no "
        "step: it does not hold what this cursor read before");

  SessionData& more = delta.records;
  SessionGrowth g;
  g.ops = into.ops.size();
  g.gpu = into.gpu.size();
  g.collectives = into.collectives.size();
  g.memory = into.memory.size();
  g.counters = into.counters.size();
  g.gradient_histograms = into.gradient_histograms.size();
  g.strings = into.strings.size();

  for (const std::string& s : delta.new_strings) {
    const size_t expected = into.strings.size();
    if (into.strings.intern(s) != expected)
      throw ValueError(
          fmt::format("append_delta: the delta's string '{}' is already in the data: the delta does "
                      "not continue it",
                      s));
  }
  g.threads_changed = !same_threads(into.threads, more.threads);
  into.threads = std::move(more.threads);
  into.name = std::move(more.name);
  into.clock_offset_ns = more.clock_offset_ns;
  into.start_ns = more.start_ns;
  into.end_ns = more.end_ns;
  into.complete = more.complete;
  into.dropped_records = more.dropped_records;
  into.metadata = std::move(more.metadata);

  if (delta.replaces_open_step) into.steps.pop_back();
  g.steps = into.steps.size();
  append(into.ops, more.ops);
  append(into.gpu, more.gpu);
  append(into.collectives, more.collectives);
  append(into.memory, more.memory);
  append(into.counters, more.counters);
  append(into.gradient_histograms, more.gradient_histograms);
  append(into.steps, more.steps);
  if (delta.graphs_changed) into.graphs = std::move(more.graphs);
  g.graphs_changed = delta.graphs_changed;
  g.records_changed = into.ops.size() != g.ops || into.gpu.size() != g.gpu ||
                      into.collectives.size() != g.collectives || into.memory.size() != g.memory ||
                      into.counters.size() != g.counters || into.steps.size() != g.steps || delta.replaces_open_step ||
                      delta.graphs_changed || into.strings.size() != g.strings ||
                      into.gradient_histograms.size() != g.gradient_histograms;
  return g;
}

}  // namespace rt::prof
