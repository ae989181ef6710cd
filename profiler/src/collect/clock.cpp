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
}

int64_t TickMap::to_ns(int64_t tick) const {
  if (!g_use_tsc || points_.empty()) return tick;
  if (points_.size() == 1) return points_[0].ns + (tick - points_[0].tick);
  auto it = std::upper_bound(points_.begin(), points_.end(), tick,
                             [](int64_t t, const Point& p) { return t < p.tick; });
  size_t hi = size_t(it - points_.begin());
  hi = std::clamp<size_t>(hi, 1, points_.size() - 1);
  const Point& a = points_[hi - 1];
  const Point& b = points_[hi];
  const long double slope = (long double)(b.ns - a.ns) / (long double)(b.tick - a.tick);
  return a.ns + int64_t((long double)(tick - a.tick) * slope);
}

}  // namespace rt::prof::collect
