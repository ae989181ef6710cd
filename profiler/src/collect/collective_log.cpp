#include "collect/collective_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collect/pending_log.h"
#include "rt/dtype.h"

namespace rt::prof::collect {
namespace {

struct PendingCollective {
  rt::CollectiveEvent event;  // its views and sizes point into the strings below
  std::string group, call_site, shape;
};

PendingLog<PendingCollective>& log() { return PendingLog<PendingCollective>::process(kMaxPendingCollectives); }

std::string shape_text(const rt::CollectiveEvent& e) {
  std::string s = "[";
  for (size_t i = 0; i < e.ndim && i < 4; ++i) s += fmt::format("{}{}", i ? ", " : "", e.sizes[i]);
  if (e.ndim > 4) s += ", ...";
  return s + "]";
}

}  // namespace

void record_collective(const rt::CollectiveEvent& e) noexcept {
  log().push([&] {
    PendingCollective p{e, std::string(e.group), std::string(e.call_site), shape_text(e)};
    p.event.group = {};
    p.event.call_site = {};
    p.event.sizes = nullptr;
    return p;
  });
}

void drain_collectives(SessionData& out) {
  std::vector<PendingCollective> taken = log().take(out.dropped_records);
  out.collectives.reserve(out.collectives.size() + taken.size());
  for (const PendingCollective& p : taken) {
    const rt::CollectiveEvent& e = p.event;
    CollectiveRecord r;
    r.enqueue_ns = e.enqueue_ns;
    r.start_ns = std::max(e.start_ns, e.enqueue_ns);
    r.end_ns = std::max(e.end_ns, r.start_ns);
    r.thread = e.thread;
    r.name = out.strings.intern(e.op);
    r.group = out.strings.intern(p.group);
    r.shape = out.strings.intern(p.shape);
    r.dtype = out.strings.intern(rt::dtype_name(e.dtype));
    r.call_site = p.call_site.empty() ? 0 : out.strings.intern(p.call_site);
    r.seq = e.seq;
    r.numel = e.numel;
    r.bytes = e.bytes;
    r.peer = e.peer;
    r.point_to_point = e.point_to_point;
    out.collectives.push_back(r);
  }
}

void discard_collectives() { log().clear(); }

}  // namespace rt::prof::collect
