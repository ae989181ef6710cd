#include "collect/gradient_log.h"

#include <atomic>
#include <string>
#include <vector>

#include "collect/pending_log.h"
#include "rt/prof/gradient_histograms.h"

namespace rt::prof::collect {
namespace {

struct PendingGradient {
  std::string name;
  GradientHistogramRecord record;  // name unset until drained
};

PendingLog<PendingGradient>& log() { return PendingLog<PendingGradient>::process(kMaxPendingGradientHistograms); }

std::atomic<int64_t> g_step{-1};

}  // namespace

void set_gradient_step(int64_t step) noexcept { g_step.store(step, std::memory_order_relaxed); }

void record_gradient(std::string_view name, const rt::debug::GradientStats& s, int64_t time_ns) noexcept {
  log().push([&] {
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
    return p;
  });
}

void drain_gradient_histograms(SessionData& out) {
  std::vector<PendingGradient> taken = log().take(out.dropped_records);
  out.gradient_histograms.reserve(out.gradient_histograms.size() + taken.size());
  for (PendingGradient& p : taken) {
    p.record.name = out.strings.intern(p.name);
    out.gradient_histograms.push_back(std::move(p.record));
  }
}

void discard_gradient_histograms() { log().clear(); }

}  // namespace rt::prof::collect
