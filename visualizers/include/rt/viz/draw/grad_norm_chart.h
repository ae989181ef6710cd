// rt/viz/draw/grad_norm_chart.h — per-parameter gradient norms over training steps, drawn with Dear
// ImGui on a log scale, with vanishing and exploding parameters flagged in color and a legend.
//
//   rt::debug::GradNormHistory history;          // record() after each backward
//   rt::viz::draw::GradNormChart chart;
//   chart.draw(history, ImGui::GetContentRegionAvail(), frame.scale());
//
// Contracts
// - One line per parameter name (series_color by first appearance); y is log10 of the norm, the range
//   covering every finite positive norm plus the history's vanishing/exploding thresholds (drawn as
//   dashed guides). Zero, missing and non-finite norms leave gaps; non-finite ones get a red mark at
//   the top edge.
// - A point flagged exploding gets a red ring, vanishing a blue one; the legend lists each parameter's
//   last norm and its flag ("EXPLODING" red, "VANISHING" blue) — flagged parameters first.
// - Hovering the plot shows every parameter's norm at the nearest step.
// - layout() describes the last frame (device pixels). Never throws for any history.
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

#include "rt/debug/grad_norm_history.h"

namespace rt::viz::draw {

struct GradNormChartLayout {
  ImVec2 plot_min, plot_max;
  double log_lo = 0, log_hi = 0;  // log10 range of the y axis
  int64_t steps = 0;
  struct Entry {
    std::string name;
    ImU32 color = 0;
    bool vanishing = false, exploding = false;
    ImVec2 min, max;  // the legend row
  };
  std::vector<Entry> legend;
};

inline constexpr ImU32 kExplodingColor = IM_COL32(255, 80, 70, 255);
inline constexpr ImU32 kVanishingColor = IM_COL32(80, 160, 255, 255);

class GradNormChart {
 public:
  void draw(const debug::GradNormHistory& history, ImVec2 size, float scale);
  const GradNormChartLayout& layout() const { return layout_; }

 private:
  GradNormChartLayout layout_;
};

}  // namespace rt::viz::draw
