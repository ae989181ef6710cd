// The recording clock: the CPU's invariant TSC where it has one (a few ns to read), else the
// steady clock. Ticks become steady-clock ns through TickMap. See Note [Recording clock].
#pragma once
#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RT_PROF_HAVE_TSC 1
#endif

#include "rt/export.h"
#include "rt/op_observer.h"

namespace rt::prof::collect {

// True when ticks() reads the TSC; decided once per process from CPUID (invariant TSC bit).
bool clock_uses_tsc();
RT_API extern bool g_use_tsc;  // exported, with TickMap, for tests/profiler/test_tick_map.cpp

inline int64_t ticks() {
#ifdef RT_PROF_HAVE_TSC
  if (g_use_tsc) return int64_t(__rdtsc());
#endif
  return rt::now_ns();
}

// Note [Recording clock]
// Hot-path events carry ticks. Each drain adds a calibration point (ticks, now_ns) read back
// to back; a tick value converts by the straight line through the two points around it (the
// first or last two outside), so every event converts the same way whichever drain saw it,
// and order is preserved: nesting stays strict after conversion.
class RT_API TickMap {
 public:
  void add_point();  // reads both clocks now
  void add_point(int64_t tick, int64_t ns);
  // Not for concurrent callers: it remembers the last segment it used (one SlotConverter at a time,
  // under the session's mutex, calls it).
  int64_t to_ns(int64_t tick) const;
  bool empty() const { return points_.empty(); }

 private:
  struct Point {
    int64_t tick;
    int64_t ns;
  };
  std::vector<Point> points_;
  // The segment [points_[hi - 1], points_[hi]] the last call interpolated on, and its slope: the ticks
  // of one drain fall in the same segment, so most calls skip the search and the division.
  mutable size_t cached_hi_ = 0;
  mutable double cached_slope_ = 0;  // ns per tick; double keeps a 5-minute segment exact to 1e-4 ns
};

}  // namespace rt::prof::collect
