#include "ridgeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace grad_histogram {
namespace {

ImU32 ridge_color(float t, int alpha) {  // t: 0 oldest .. 1 newest; cool to warm, as TensorBoard's
  int r = int(70 + 180 * t), g = int(120 + 40 * t), b = int(200 - 150 * t);
  return IM_COL32(r, g, b, alpha);
}

}  // namespace

RidgelineHover draw_ridgeline(ImDrawList* dl, const ParameterSeries& series, ImVec2 min, ImVec2 max, float scale,
                              ImVec2 mouse, int max_ridges) {
  RidgelineHover hover;
  const float axis_h = 18 * scale, label_w = 56 * scale;
  ImVec2 plot_min(min.x + label_w, min.y + 4 * scale), plot_max(max.x - 8 * scale, max.y - axis_h);
  if (plot_max.x - plot_min.x < 40 || plot_max.y - plot_min.y < 30 || series.steps.empty()) return hover;
  dl->AddRectFilled(min, max, IM_COL32(24, 26, 30, 255));

  size_t n = std::min<size_t>(series.steps.size(), size_t(std::max(1, max_ridges)));
  size_t first = series.steps.size() - n;
  double lo = series.lo, hi = series.has_range ? series.hi : series.lo + 1;
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 1e-3);
  auto x_of = [&](double v) { return float(plot_min.x + (v - lo) / (hi - lo) * (plot_max.x - plot_min.x)); };

  // Densest bin (counts per unit of value) among the ridges shown scales every ridge.
  double peak = 0;
  for (size_t k = first; k < series.steps.size(); ++k) {
    const StepHistogram& s = series.steps[k];
    if (s.counts.empty()) continue;
    double w = (s.hi - s.lo) / double(s.counts.size());
    for (int64_t c : s.counts) peak = std::max(peak, w > 0 ? double(c) / w : double(c));
  }
  if (peak <= 0) peak = 1;

  float total_h = plot_max.y - plot_min.y;
  float ridge_h = total_h * 0.45f;                                    // the tallest ridge
  float offset = n > 1 ? (total_h - ridge_h) / float(n - 1) : 0.f;    // from one step's baseline to the next
  char label[32];
  for (size_t j = 0; j < n; ++j) {  // oldest first, so newer ridges are drawn over them
    const StepHistogram& s = series.steps[first + j];
    float t = n > 1 ? float(j) / float(n - 1) : 1.f;
    float base = plot_min.y + ridge_h + offset * float(j);
    if (s.nan_count + s.inf_count > 0)
      dl->AddCircleFilled(ImVec2(plot_min.x - 6 * scale, base - 2 * scale), 3.5f * scale, IM_COL32(235, 80, 70, 255));
    if (j == n - 1 || j == 0 || j % std::max<size_t>(1, n / 6) == 0) {
      std::snprintf(label, sizeof label, "%lld", (long long)s.step);
      dl->AddText(ImVec2(min.x + 4 * scale, base - ImGui::GetFontSize()), IM_COL32(150, 150, 160, 255), label);
    }
    if (s.counts.empty()) continue;
    double w = (s.hi - s.lo) / double(s.counts.size());
    size_t bins = s.counts.size();
    ImU32 fill = ridge_color(t, 70 + int(120 * t)), line = ridge_color(t, 255);
    ImVec2 prev;
    for (size_t b = 0; b < bins; ++b) {
      double density = w > 0 ? double(s.counts[b]) / w : double(s.counts[b]);
      float x0 = x_of(s.lo + w * double(b)), x1 = w > 0 ? x_of(s.lo + w * double(b + 1)) : x0 + 2 * scale;
      float y = base - float(density / peak) * ridge_h;
      dl->AddRectFilled(ImVec2(x0, y), ImVec2(std::max(x1, x0 + 1), base), fill);
      ImVec2 top((x0 + x1) * 0.5f, y);
      if (b > 0) dl->AddLine(prev, top, line, 1.2f * scale);
      prev = top;
      if (mouse.x >= x0 && mouse.x < std::max(x1, x0 + 1) && mouse.y >= y && mouse.y <= base) {
        hover.valid = true;
        hover.step = s.step;
        hover.bin_lo = s.lo + w * double(b);
        hover.bin_hi = s.lo + w * double(b + 1);
        hover.count = s.counts[b];
        hover.nan_count = s.nan_count;
        hover.inf_count = s.inf_count;
      }
    }
    dl->AddLine(ImVec2(plot_min.x, base), ImVec2(plot_max.x, base), IM_COL32(70, 72, 80, 120), 1.0f);
  }
  // Value axis: five ticks.
  for (int i = 0; i <= 4; ++i) {
    double v = lo + (hi - lo) * i / 4.0;
    float x = x_of(v);
    dl->AddLine(ImVec2(x, plot_max.y), ImVec2(x, plot_max.y + 4 * scale), IM_COL32(150, 150, 160, 255));
    std::snprintf(label, sizeof label, "%.3g", v);
    float tw = ImGui::CalcTextSize(label).x;
    float tx = std::clamp(x - tw / 2, min.x, max.x - tw);
    dl->AddText(ImVec2(tx, plot_max.y + 4 * scale), IM_COL32(150, 150, 160, 255), label);
  }
  return hover;
}

}  // namespace grad_histogram
