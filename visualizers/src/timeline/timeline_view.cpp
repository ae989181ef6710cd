#include "rt/viz/timeline_view.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::viz {

void TimelineView::set_extent(int64_t first_ns, int64_t last_ns) {
  if (last_ns < first_ns)
    throw ValueError(fmt::format("TimelineView::set_extent: last ({}) is before first ({})", last_ns, first_ns));
  first_ns_ = first_ns;
  last_ns_ = last_ns;
  clamp();
}

void TimelineView::set_width(double width_px) {
  if (!std::isfinite(width_px) || width_px <= 0)
    throw ValueError(fmt::format("TimelineView::set_width: width must be > 0 pixels, got {}", width_px));
  width_px_ = width_px;
}

void TimelineView::set_window(int64_t t0, int64_t t1) {
  if (t1 < t0) throw ValueError(fmt::format("TimelineView::set_window: t1 ({}) is before t0 ({})", t1, t0));
  t0_ = t0;
  t1_ = t1;
  clamp();
}

void TimelineView::fit_all() {
  t0_ = first_ns_;
  t1_ = last_ns_;
  clamp();
}

void TimelineView::zoom(double factor, double cursor_x) {
  if (!std::isfinite(factor) || factor <= 0)
    throw ValueError(fmt::format("TimelineView::zoom: factor must be > 0, got {}", factor));
  const double x = std::clamp(std::isfinite(cursor_x) ? cursor_x : 0.0, 0.0, width_px_);
  const double anchor = double(t0_) + x * ns_per_px();
  const double span = std::max(double(kMinSpanNs), double(span_ns()) / factor);
  const double new_t0 = anchor - x / width_px_ * span;
  t0_ = int64_t(std::llround(new_t0));
  t1_ = int64_t(std::llround(new_t0 + span));
  clamp();
}

void TimelineView::pan(double dx_px) {
  if (!std::isfinite(dx_px)) throw ValueError("TimelineView::pan: dx is not finite");
  const auto shift = int64_t(std::llround(dx_px * ns_per_px()));
  t0_ -= shift;
  t1_ -= shift;
  clamp();
}

double TimelineView::x_of(int64_t time_ns) const { return double(time_ns - t0_) / ns_per_px(); }

int64_t TimelineView::time_at(double x) const { return t0_ + int64_t(std::llround(x * ns_per_px())); }

void TimelineView::clamp() {
  const int64_t extent = last_ns_ - first_ns_;
  const int64_t max_span = std::max(extent, kMinSpanNs);
  const int64_t span = std::clamp(t1_ - t0_, kMinSpanNs, max_span);
  t0_ = std::clamp(t0_, first_ns_, first_ns_ + max_span - span);
  t1_ = t0_ + span;
}

}  // namespace rt::viz
