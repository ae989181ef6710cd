#include "collect/clock.h"

#include <algorithm>

#ifdef RT_PROF_HAVE_TSC
#include <cpuid.h>
#endif

namespace rt::prof::collect {

namespace {
bool detect_invariant_tsc() {
#ifdef RT_PROF_HAVE_TSC
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}
}  // namespace

bool g_use_tsc = detect_invariant_tsc();

bool clock_uses_tsc() { return g_use_tsc; }

void TickMap::add_point() {
  const int64_t t0 = ticks();
  const int64_t ns = rt::now_ns();
  const int64_t t1 = ticks();
  add_point(t0 + (t1 - t0) / 2, ns);
}

void TickMap::add_point(int64_t tick, int64_t ns) {
  if (!points_.empty() && tick <= points_.back().tick) return;  // keeps the line strictly increasing
  points_.push_back({tick, ns});
  cached_hi_ = 0;  // the last segment may have been the clamped one
}

int64_t TickMap::to_ns(int64_t tick) const {
  if (!g_use_tsc || points_.empty()) return tick;
  if (points_.size() == 1) return points_[0].ns + (tick - points_[0].tick);
  // The segment upper_bound would pick: the first point after `tick`, clamped to [1, size - 1].
  const size_t last = points_.size() - 1;
  size_t hi = cached_hi_;
  const bool cached = hi >= 1 && hi <= last && (hi == 1 || tick >= points_[hi - 1].tick) &&
                      (hi == last || tick < points_[hi].tick);
  if (!cached) {
    auto it = std::upper_bound(points_.begin(), points_.end(), tick,
                               [](int64_t t, const Point& p) { return t < p.tick; });
    hi = std::clamp<size_t>(size_t(it - points_.begin()), 1, last);
    cached_hi_ = hi;
    cached_slope_ = double(points_[hi].ns - points_[hi - 1].ns) / double(points_[hi].tick - points_[hi - 1].tick);
  }
  const Point& a = points_[hi - 1];
  return a.ns + int64_t(double(tick - a.tick) * cached_slope_);
}

}  // namespace rt::prof::collect
