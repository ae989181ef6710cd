// The recording clock: the CPU's invariant TSC where it has one (a few ns to read), else the
// steady clock. Ticks become steady-clock ns through TickMap. See Note [Recording clock].
#pragma once
#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RT_PROF_HAVE_TSC 1
#endif

#include "rt/op_observer.h"

namespace rt::prof::collect {

// True when ticks() reads the TSC; decided once per process from CPUID (invariant TSC bit).
bool clock_uses_tsc();
extern bool g_use_tsc;

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
class TickMap {
 public:
  void add_point();  // reads both clocks now
  void add_point(int64_t tick, int64_t ns);
  int64_t to_ns(int64_t tick) const;
  bool empty() const { return points_.empty(); }

 private:
  struct Point {
    int64_t tick;
    int64_t ns;
  };
  std::vector<Point> points_;
};

}  // namespace rt::prof::collect
