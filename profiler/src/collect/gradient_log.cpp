#include "collect/gradient_log.h"

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "rt/prof/gradient_histograms.h"

namespace rt::prof::collect {
namespace {

struct PendingGradient {
  std::string name;
  GradientHistogramRecord record;  // name unset until drained
};

struct Log {
  std::mutex mu;
  std::vector<PendingGradient> pending;
  uint64_t dropped = 0;
};

Log& log() {
  static auto* l = new Log;  // leaked: a backward thread may still report during static destruction
  return *l;
}

std::atomic<int64_t> g_step{-1};

}  // namespace

void set_gradient_step(int64_t step) noexcept { g_step.store(step, std::memory_order_relaxed); }

void record_gradient(std::string_view name, const rt::debug::GradientStats& s, int64_t time_ns) noexcept {
  Log& l = log();
  try {
    PendingGradient p;
    p.name = std::string(name);
    GradientHistogramRecord& r = p.record;
    r.step = g_step.load(std::memory_order_relaxed);
    r.time_ns = time_ns;
    r.numel = s.numel;
    r.norm = s.norm;
    r.lo = s.histogram.lo;
    r.hi = s.histogram.hi;
    r.nan_count = s.nan_count;
    r.inf_count = s.inf_count;
    r.counts = s.histogram.counts;
    std::lock_guard<std::mutex> lock(l.mu);
    if (l.pending.size() >= kMaxPendingGradientHistograms) {
      ++l.dropped;
      return;
    }
    l.pending.push_back(std::move(p));
  } catch (...) {  // out of memory: the record is lost, and counted
    std::lock_guard<std::mutex> lock(l.mu);
    ++l.dropped;
  }
}

void drain_gradient_histograms(SessionData& out) {
  std::vector<PendingGradient> taken;
  uint64_t dropped = 0;
  {
    Log& l = log();
    std::lock_guard<std::mutex> lock(l.mu);
    taken.swap(l.pending);
    std::swap(dropped, l.dropped);
  }
  out.dropped_records += dropped;
  out.gradient_histograms.reserve(out.gradient_histograms.size() + taken.size());
  for (PendingGradient& p : taken) {
    p.record.name = out.strings.intern(p.name);
    out.gradient_histograms.push_back(std::move(p.record));
  }
}

void discard_gradient_histograms() {
  Log& l = log();
  std::lock_guard<std::mutex> lock(l.mu);
  l.pending.clear();
  l.dropped = 0;
}

}  // namespace rt::prof::collect
