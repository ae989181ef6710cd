#include "rt/viz/timeline_select.h"

#include <algorithm>

#include "rt/op_origin.h"

namespace rt::viz {

namespace {

const char* op_kind_name(prof::OpKind k) {
  switch (k) {
    case prof::OpKind::Op: return "op";
    case prof::OpKind::BackwardNode: return "backward node";
    case prof::OpKind::UserRange: return "user range";
  }
  return "op";
}

const char* gpu_kind_name(prof::GpuActivityKind k) {
  switch (k) {
    case prof::GpuActivityKind::Kernel: return "kernel";
    case prof::GpuActivityKind::Memcpy: return "memcpy";
    case prof::GpuActivityKind::Memset: return "memset";
    case prof::GpuActivityKind::Synchronization: return "synchronization";
    case prof::GpuActivityKind::Runtime: return "cuda runtime";
    case prof::GpuActivityKind::Driver: return "cuda driver";
  }
  return "gpu";
}

}  // namespace

EventDetails details(const TimelineModel& model, const EventRef& e) {
  const prof::SessionData& d = model.data();
  EventDetails out;
  out.name = model.name(e);
  out.track = model.tracks()[e.track].name;
  out.start_ns = model.start_ns(e);
  out.end_ns = model.end_ns(e);
  out.duration_ns = out.end_ns - out.start_ns;
  out.self_ns = model.self_ns(e);
  out.depth = e.level;
  const uint32_t r = model.record(e);
  switch (model.source(e)) {
    case EventSource::Op: {
      const prof::OpRecord& op = d.ops[r];
      out.kind = op_kind_name(op.kind);
      out.module = d.strings.at(op.module);
      if (op.kind == prof::OpKind::Op) out.plugin = rt::op_origin(out.name);
      out.input_shapes = d.strings.at(op.input_shapes);
      out.input_dtypes = d.strings.at(op.input_dtypes);
      out.sequence_nr = op.sequence_nr;
      out.correlation_id = op.correlation_id;
      out.repaired = op.start_ns != out.start_ns || op.end_ns != out.end_ns;
      break;
    }
    case EventSource::Gpu: {
      const prof::GpuActivityRecord& g = d.gpu[r];
      out.kind = gpu_kind_name(g.kind);
      out.correlation_id = g.external_id;
      out.device = g.device;
      out.stream = g.stream;
      out.bytes = g.bytes;
      out.repaired = g.start_ns != out.start_ns || g.end_ns != out.end_ns;
      break;
    }
    case EventSource::Step: {
      const prof::StepRecord& s = d.steps[r];
      out.kind = "step";
      out.repaired = s.start_ns != out.start_ns || s.end_ns != out.end_ns;
      break;
    }
    case EventSource::Collective: {
      const prof::CollectiveRecord& c = d.collectives[r];
      out.kind = c.point_to_point ? "point-to-point" : "collective";
      out.input_shapes = d.strings.at(c.shape);
      out.input_dtypes = d.strings.at(c.dtype);
      out.bytes = uint64_t(std::max<int64_t>(c.bytes, 0));
      out.group = d.strings.at(c.group);
      out.call_site = d.strings.at(c.call_site);
      out.seq = int64_t(c.seq);
      out.peer = c.peer;
      out.queued_ns = c.start_ns - c.enqueue_ns;
      out.repaired = c.end_ns < c.start_ns;
      break;
    }
  }
  return out;
}

}  // namespace rt::viz
