#include "session/batch_merge.h"

#include <algorithm>

namespace rt::prof::session {

namespace {

// Room for `more` records, growing geometrically: an exact reserve would copy the whole vector at every flush.
template <typename T>
void reserve_more(std::vector<T>& v, size_t more) {
  if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, v.capacity() * 2));
}

}  // namespace

void merge_batch(SessionData& into, SessionData& batch, bool keep_records) {
  std::vector<StringId> remap(batch.strings.size(), 0);
  auto id = [&](StringId local) {
    StringId& mapped = remap.at(local);
    if (mapped == 0 && local != 0) mapped = into.strings.intern(batch.strings.at(local));
    return mapped;
  };

  std::erase_if(batch.threads, [&](const ThreadRecord& t) {
    auto known = std::find_if(into.threads.begin(), into.threads.end(),
                              [&](const ThreadRecord& k) { return k.thread == t.thread; });
    if (known != into.threads.end()) {
      known->name = id(t.name);
      return true;
    }
    into.threads.push_back({t.thread, t.os_tid, id(t.name)});
    return false;
  });
  into.dropped_records += batch.dropped_records;
  for (const auto& [key, value] : batch.metadata) into.metadata[key] = value;
  if (!keep_records) return;

  reserve_more(into.ops, batch.ops.size());
  for (OpRecord r : batch.ops) {
    r.name = id(r.name);
    r.module = id(r.module);
    r.input_shapes = id(r.input_shapes);
    r.input_dtypes = id(r.input_dtypes);
    into.ops.push_back(r);
  }
  for (GpuActivityRecord r : batch.gpu) {
    r.name = id(r.name);
    into.gpu.push_back(r);
  }
  for (CollectiveRecord r : batch.collectives) {
    r.name = id(r.name);
    r.group = id(r.group);
    r.shape = id(r.shape);
    r.dtype = id(r.dtype);
    r.call_site = id(r.call_site);
    into.collectives.push_back(r);
  }
  reserve_more(into.memory, batch.memory.size());
  for (MemoryRecord r : batch.memory) {
    r.op = id(r.op);
    into.memory.push_back(r);
  }
  for (CounterRecord r : batch.counters) {
    r.name = id(r.name);
    into.counters.push_back(r);
  }
  into.steps.insert(into.steps.end(), batch.steps.begin(), batch.steps.end());
  for (GradientHistogramRecord r : batch.gradient_histograms) {  // a copy: the store writes the batch after this
    r.name = id(r.name);
    into.gradient_histograms.push_back(std::move(r));
  }
  into.graphs.insert(into.graphs.end(), batch.graphs.begin(), batch.graphs.end());
}

bool batch_is_empty(const SessionData& batch) {
  return batch.threads.empty() && batch.ops.empty() && batch.gpu.empty() && batch.collectives.empty() &&
         batch.memory.empty() &&
         batch.counters.empty() && batch.steps.empty() &&
         batch.graphs.empty() && batch.gradient_histograms.empty() && batch.dropped_records == 0 && batch.metadata.empty() &&
         batch.start_ns == 0 && batch.end_ns == 0 && batch.clock_offset_ns == 0;
}

}  // namespace rt::prof::session
