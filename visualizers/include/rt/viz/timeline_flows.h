// rt/viz/timeline_flows.h — the timeline's arrows: a CPU op to the GPU work it launched, and a
// forward op to the backward node autograd ran for it.
//
//   rt::viz::FlowIndex flows(model);
//   for (const rt::viz::Flow& f : flows.for_event(selected)) draw_arrow(f.from_ns, f.from, f.to_ns, f.to);
//   std::vector<rt::viz::Flow> visible;
//   flows.in_window(view.t0(), view.t1(), visible);
//
// Contracts
// - Launch: an op with a non-zero correlation_id -> every kernel, memcpy and memset whose
//   external_id equals it (when several ops share the id, the one that started last: the innermost).
// - ForwardBackward: for each backward node with sequence_nr >= 0, from the engine op (OpKind::Op)
//   with the same sequence_nr that started last (the engine tags every op running before the node
//   exists with its number; the last to start is the one that created it).
// - A flow runs from the start of its source event (from_ns) to the start of its target (to_ns).
//   all() is sorted by min(from_ns, to_ns); in_window() returns the flows whose span
//   [min, max] of the two times touches [t0, t1], in that order.
// - Built once from a model; it refers to the model's events by EventRef only.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "rt/viz/timeline.h"

namespace rt::viz {

enum class FlowKind : uint8_t { Launch, ForwardBackward };

struct Flow {
  FlowKind kind = FlowKind::Launch;
  EventRef from;
  EventRef to;
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};

class FlowIndex {
 public:
  explicit FlowIndex(const TimelineModel& model);

  const std::vector<Flow>& all() const { return flows_; }
  std::vector<Flow> for_event(const EventRef& e) const;  // flows leaving or reaching e
  void in_window(int64_t t0, int64_t t1, std::vector<Flow>& out) const;  // overwrites out

 private:
  std::vector<Flow> flows_;
  std::vector<std::pair<EventRef, uint32_t>> by_event_;  // (endpoint, flow index), sorted by endpoint
  int64_t max_span_ns_ = 0;
};

}  // namespace rt::viz
