#include "attach/session_mirror.h"

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::studio {
namespace {

template <typename T>
bool copy_tail(std::vector<T>& into, const std::vector<T>& from) {
  if (from.size() <= into.size()) return false;
  into.insert(into.end(), from.begin() + std::ptrdiff_t(into.size()), from.end());
  return true;
}

template <typename T>
void copy_from(std::vector<T>& into, const std::vector<T>& from, uint64_t first) {
  into.assign(from.begin() + std::ptrdiff_t(first), from.end());
}

bool same_step(const prof::StepRecord& a, const prof::StepRecord& b) {
  return a.step == b.step && a.start_ns == b.start_ns && a.end_ns == b.end_ns;
}

bool same_threads(const std::vector<prof::ThreadRecord>& a, const std::vector<prof::ThreadRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].thread != b[i].thread || a[i].os_tid != b[i].os_tid || a[i].name != b[i].name || a[i].rank != b[i].rank)
      return false;
  return true;
}

bool same_graphs(const std::vector<prof::GraphRecord>& a, const std::vector<prof::GraphRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].backward_index != b[i].backward_index || a[i].time_ns != b[i].time_ns ||
        a[i].graph.nodes.size() != b[i].graph.nodes.size())
      return false;
  return true;
}

// The source replaced its data rather than growing it.
bool shrank(const prof::SessionData& mirror, const prof::SessionData& source) {
  return source.ops.size() < mirror.ops.size() || source.gpu.size() < mirror.gpu.size() ||
         source.collectives.size() < mirror.collectives.size() || source.memory.size() < mirror.memory.size() ||
         source.counters.size() < mirror.counters.size() || source.steps.size() < mirror.steps.size() ||
         source.gradient_histograms.size() < mirror.gradient_histograms.size() ||
         source.strings.size() < mirror.strings.size();
}

void copy_header(prof::SessionData& into, const prof::SessionData& from) {
  into.name = from.name;
  into.clock_offset_ns = from.clock_offset_ns;
  into.start_ns = from.start_ns;
  into.end_ns = from.end_ns;
  into.complete = from.complete;
  into.dropped_records = from.dropped_records;
  into.metadata = from.metadata;
  into.threads = from.threads;
  into.streams = from.streams;
}

}  // namespace

void SessionMirror::publish(const prof::SessionData& grown, uint64_t resets) {
  std::lock_guard lock(mu_);
  if (resets != source_resets_ || shrank(data_, grown)) {
    data_ = grown;
    source_resets_ = resets;
    ++serial_;
    ++version_;
    ++graph_version_;
    return;
  }
  bool changed = false;
  if (data_.name != grown.name || data_.start_ns != grown.start_ns || data_.end_ns != grown.end_ns ||
      data_.complete != grown.complete || data_.dropped_records != grown.dropped_records ||
      data_.clock_offset_ns != grown.clock_offset_ns || data_.metadata != grown.metadata ||
      data_.streams.size() != grown.streams.size() || !same_threads(data_.threads, grown.threads)) {
    copy_header(data_, grown);
    changed = true;
  }
  for (size_t i = data_.strings.size(); i < grown.strings.size(); ++i) {
    data_.strings.intern(grown.strings.at(prof::StringId(i)));
    changed = true;
  }
  changed |= copy_tail(data_.ops, grown.ops);
  changed |= copy_tail(data_.gpu, grown.gpu);
  changed |= copy_tail(data_.collectives, grown.collectives);
  changed |= copy_tail(data_.memory, grown.memory);
  changed |= copy_tail(data_.counters, grown.counters);
  changed |= copy_tail(data_.gradient_histograms, grown.gradient_histograms);
  if (!data_.steps.empty() && !same_step(data_.steps.back(), grown.steps[data_.steps.size() - 1])) {
    data_.steps.back() = grown.steps[data_.steps.size() - 1];
    changed = true;
  }
  changed |= copy_tail(data_.steps, grown.steps);
  if (!same_graphs(data_.graphs, grown.graphs)) {
    data_.graphs = grown.graphs;
    ++graph_version_;
    changed = true;
  }
  if (changed) ++version_;
}

prof::SessionDelta SessionMirror::read_since(const prof::SnapshotCursor& cursor) const {
  std::lock_guard lock(mu_);
  prof::SessionDelta d;
  d.cursor.session = serial_;
  d.cursor.layout = version_;
  d.cursor.ops = data_.ops.size();
  d.cursor.gpu = data_.gpu.size();
  d.cursor.collectives = data_.collectives.size();
  d.cursor.memory = data_.memory.size();
  d.cursor.counters = data_.counters.size();
  d.cursor.closed_steps = data_.steps.size();
  d.cursor.gradient_histograms = data_.gradient_histograms.size();
  d.cursor.strings = data_.strings.size();
  d.cursor.graphs_kept = data_.graphs.size();
  d.cursor.latest_graph = graph_version_;
  if (cursor.session != serial_) {
    d.reset = true;
    d.records = data_;
    return d;
  }
  if (cursor.ops > d.cursor.ops || cursor.gpu > d.cursor.gpu || cursor.collectives > d.cursor.collectives ||
      cursor.memory > d.cursor.memory || cursor.counters > d.cursor.counters ||
      cursor.closed_steps > d.cursor.closed_steps || cursor.strings > d.cursor.strings ||
      cursor.gradient_histograms > d.cursor.gradient_histograms)
    throw rt::ValueError(fmt::format("attached session: the cursor claims more records than the mirror holds "
                                     "({} ops read, {} held): it belongs to another reader's data",
                                     cursor.ops, d.cursor.ops));
  copy_header(d.records, data_);
  d.first_new_string = prof::StringId(cursor.strings);
  if (cursor.layout == version_) return d;
  copy_from(d.records.ops, data_.ops, cursor.ops);
  copy_from(d.records.gpu, data_.gpu, cursor.gpu);
  copy_from(d.records.collectives, data_.collectives, cursor.collectives);
  copy_from(d.records.memory, data_.memory, cursor.memory);
  copy_from(d.records.counters, data_.counters, cursor.counters);
  copy_from(d.records.gradient_histograms, data_.gradient_histograms, cursor.gradient_histograms);
  d.replaces_open_step = cursor.closed_steps > 0;
  copy_from(d.records.steps, data_.steps, cursor.closed_steps > 0 ? cursor.closed_steps - 1 : 0);
  for (size_t i = cursor.strings; i < data_.strings.size(); ++i) d.new_strings.push_back(data_.strings.at(prof::StringId(i)));
  if (cursor.latest_graph != graph_version_) {
    d.graphs_changed = true;
    d.records.graphs = data_.graphs;
  }
  return d;
}

SessionMirror::Counts SessionMirror::counts() const {
  std::lock_guard lock(mu_);
  Counts c;
  c.ops = data_.ops.size();
  c.memory = data_.memory.size();
  c.steps = data_.steps.size();
  c.complete = data_.complete;
  // While the session records, its last step may be the open one (ending "now"): the one before it is the last
  // that finished.
  const size_t n = data_.steps.size();
  if (n > 0 && (data_.complete || n > 1)) {
    const prof::StepRecord& s = data_.steps[data_.complete ? n - 1 : n - 2];
    if (s.end_ns > s.start_ns) c.last_step_ns = s.end_ns - s.start_ns;
  }
  return c;
}

}  // namespace rt::studio
