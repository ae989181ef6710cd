// rt/viz/timeline_view.h — zoom and pan arithmetic of a timeline: the visible window [t0, t1] of a
// session laid across width_px pixels, time <-> pixel conversions, zoom about a cursor, fit all.
//
//   rt::viz::TimelineView view;
//   view.set_extent(model.first_ns(), model.last_ns());
//   view.set_width(1600);
//   view.fit_all();
//   view.zoom(1.25, mouse_x);                 // wheel up: the time under the mouse stays put
//   view.pan(drag_dx);                        // drag right: earlier times come into view
//   int64_t t = view.time_at(mouse_x);
//   float x = float(view.x_of(event_start));
//
// Contracts
// - The window always lies inside the extent and spans at least kMinSpanNs; it spans at most the
//   extent (fit_all), or kMinSpanNs when the extent is shorter. Every setter re-applies these.
// - x_of(t0()) == 0 and x_of(t1()) == width_px(); time_at(x_of(t)) == t up to rounding.
// - Bad arguments (width <= 0 or not finite, zoom factor <= 0, last < first) throw rt::ValueError.
#pragma once
#include <cstdint>

namespace rt::viz {

class TimelineView {
 public:
  static constexpr int64_t kMinSpanNs = 100;

  void set_extent(int64_t first_ns, int64_t last_ns);
  void set_width(double width_px);
  void set_window(int64_t t0, int64_t t1);
  void fit_all();
  void zoom(double factor, double cursor_x);  // factor > 1 zooms in, < 1 out
  void pan(double dx_px);                     // dx > 0 shows earlier times

  int64_t t0() const { return t0_; }
  int64_t t1() const { return t1_; }
  int64_t span_ns() const { return t1_ - t0_; }
  double width_px() const { return width_px_; }
  double ns_per_px() const { return double(t1_ - t0_) / width_px_; }
  double x_of(int64_t time_ns) const;
  int64_t time_at(double x) const;

 private:
  void clamp();

  int64_t first_ns_ = 0;
  int64_t last_ns_ = 0;
  int64_t t0_ = 0;
  int64_t t1_ = kMinSpanNs;
  double width_px_ = 1.0;
};

}  // namespace rt::viz
