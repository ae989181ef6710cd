// TickMap (Note [Recording clock]): ticks convert by the line through the calibration points around
// them, the first or last two outside; the remembered segment gives the same answer as a fresh search
// in any order of calls, and a new point is taken into account at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "collect/clock.h"

using rt::prof::collect::TickMap;

namespace {

struct Point {
  int64_t tick, ns;
};

// The conversion written out: the segment upper_bound picks, clamped to the first and last.
int64_t reference(const std::vector<Point>& p, int64_t tick) {
  size_t hi = size_t(std::upper_bound(p.begin(), p.end(), tick, [](int64_t t, const Point& q) { return t < q.tick; }) -
                     p.begin());
  hi = std::clamp<size_t>(hi, 1, p.size() - 1);
  const Point& a = p[hi - 1];
  const Point& b = p[hi];
  const long double slope = (long double)(b.ns - a.ns) / (long double)(b.tick - a.tick);
  return a.ns + int64_t((long double)(tick - a.tick) * slope);
}

// Forces the TSC path (the line) for the test, whatever this CPU has.
struct UseTsc {
  bool saved = rt::prof::collect::g_use_tsc;
  UseTsc() { rt::prof::collect::g_use_tsc = true; }
  ~UseTsc() { rt::prof::collect::g_use_tsc = saved; }
};

}  // namespace

TEST_CASE("TickMap converts on the segment around each tick, in any call order", "[tick_map]") {
  UseTsc tsc;
  std::vector<Point> points = {{1000, 50}, {4000, 1050}, {9000, 2600}, {9500, 2800}};
  TickMap map;
  for (const auto& p : points) map.add_point(p.tick, p.ns);
  std::mt19937_64 rng(5);
  std::vector<int64_t> ticks = {0, 999, 1000, 3999, 4000, 8999, 9000, 9499, 9500, 20000};
  for (int i = 0; i < 500; ++i) ticks.push_back(int64_t(rng() % 12000));
  for (int64_t t : ticks) REQUIRE(map.to_ns(t) == reference(points, t));
  // Sorted, as a drain mostly calls it: the remembered segment is reused and must still be right.
  std::sort(ticks.begin(), ticks.end());
  for (int64_t t : ticks) REQUIRE(map.to_ns(t) == reference(points, t));
  // A new point changes the last segment: ticks past the old end now convert on it.
  CHECK(map.to_ns(9800) == reference(points, 9800));
  points.push_back({10000, 3100});
  map.add_point(10000, 3100);
  for (int64_t t : {9600, 9800, 12000, 500}) REQUIRE(map.to_ns(t) == reference(points, t));
}

TEST_CASE("TickMap with one point shifts by its offset, and a point before the last is ignored", "[tick_map]") {
  UseTsc tsc;
  TickMap map;
  map.add_point(100, 7);
  CHECK(map.to_ns(150) == 57);
  map.add_point(90, 1);  // not after the last point: ignored, the line stays increasing
  CHECK(map.to_ns(150) == 57);
}
