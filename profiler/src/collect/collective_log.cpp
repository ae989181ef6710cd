#include "collect/collective_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "rt/dtype.h"

namespace rt::prof::collect {
namespace {

struct PendingCollective {
  rt::CollectiveEvent event;  // its views and sizes point into the strings below
  std::string group, call_site, shape;
};

struct Log {
  std::mutex mu;
  std::vector<PendingCollective> pending;
  uint64_t dropped = 0;
};

Log& log() {
  static auto* l = new Log;  // leaked: a backend thread may still report during static destruction
  return *l;
}

std::string shape_text(const rt::CollectiveEvent& e) {
  std::string s = "[";
  for (size_t i = 0; i < e.ndim && i < 4; ++i) s += fmt::format("{}{}", i ? ", " : "", e.sizes[i]);
  if (e.ndim > 4) s += ", ...";
  return s + "]";
}

}  // namespace

void record_collective(const rt::CollectiveEvent& e) noexcept {
  Log& l = log();
  try {
    PendingCollective p{e, std::string(e.group), std::string(e.call_site), shape_text(e)};
    p.event.group = {};
    p.event.call_site = {};
    p.event.sizes = nullptr;
    std::lock_guard<std::mutex> lock(l.mu);
    if (l.pending.size() >= kMaxPendingCollectives) {
      ++l.dropped;
      return;
    }
    l.pending.push_back(std::move(p));
  } catch (...) {  // out of memory: the record is lost, and counted
    std::lock_guard<std::mutex> lock(l.mu);
    ++l.dropped;
  }
}

void drain_collectives(SessionData& out) {
  std::vector<PendingCollective> taken;
  uint64_t dropped = 0;
  {
    Log& l = log();
    std::lock_guard<std::mutex> lock(l.mu);
    taken.swap(l.pending);
    std::swap(dropped, l.dropped);
  }
  out.dropped_records += dropped;
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

void discard_collectives() {
  Log& l = log();
  std::lock_guard<std::mutex> lock(l.mu);
  l.pending.clear();
  l.dropped = 0;
}

}  // namespace rt::prof::collect
