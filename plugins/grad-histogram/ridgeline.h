// ridgeline.h — one parameter's gradient histograms over steps, drawn as TensorBoard's "offset" histogram view:
// one ridge per step, the newest in front at the bottom, older ones behind it and higher, fading.
//
//   RidgelineHover hover = draw_ridgeline(ImGui::GetWindowDrawList(), series, rect, scale, ImGui::GetMousePos());
//   if (hover.valid) ImGui::SetTooltip("step %lld: %lld values in [%g, %g)", ...);
//
// Contracts
// - Draws at most max_ridges of the newest steps inside `rect`, all on one value axis (the series' lo..hi), each
//   ridge scaled by the densest bin of the steps shown; bins are converted to counts per unit of value so steps
//   whose ranges differ compare fairly.
// - Steps whose gradient held NaN or inf get a red marker at their left end.
// - Returns what is under `mouse`: the step and the bin (its range and count), when over a ridge.
#pragma once
#include <imgui.h>

#include <cstdint>

#include "histogram_index.h"

namespace grad_histogram {

struct RidgelineHover {
  bool valid = false;
  int64_t step = -1;
  double bin_lo = 0, bin_hi = 0;
  int64_t count = 0;
  int64_t nan_count = 0, inf_count = 0;
};

RidgelineHover draw_ridgeline(ImDrawList* dl, const ParameterSeries& series, ImVec2 min, ImVec2 max, float scale,
                              ImVec2 mouse, int max_ridges = 40);

}  // namespace grad_histogram
