// rt/viz/draw/scalars_draw.h — TensorBoard-style scalar charts drawn with Dear ImGui: one chart per
// counter ("loss", "lr", ...), a smoothing slider (TensorBoard's debiased EMA, the raw line stays
// faint behind the smoothed one), x by step or by time, and several sessions overlaid.
//
//   rt::viz::draw::ScalarsDraw scalars({run_a, run_b});     // shared_ptr<const SessionData> each
//   scalars.set_smoothing(0.6);
//   scalars.draw(ImGui::GetContentRegionAvail(), scale);
//   scalars.append(1, growth);                  // run_b is live and its data grew (rt::prof::append_delta)
//
// Contracts
// - Charts are ordered by counter name (the union over the sessions); each session keeps one color
//   (series_color(i), in the order given) in every chart and in the legend.
// - Lines with more points than about twice the chart's pixel width are drawn from min/max
//   columns (rt::viz::downsample), so spikes survive. Hovering a chart shows every session's value
//   at the nearest x.
// - When there are more charts than fit, the charts area scrolls. Never throws for any SessionData.
// - The x axis starts as steps, or as time when no session has two steps; until the user picks one
//   (set_axis or the toolbar), append() makes that choice again.
// - append(session, growth): session `session`'s data grew (ScalarSet::append); a new counter adds its chart.
//   An index out of range throws rt::IndexError.
#pragma once
#include <imgui.h>

#include <memory>
#include <string>
#include <vector>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"
#include "rt/viz/scalars.h"

namespace rt::viz::draw {

struct ScalarsLayout {
  struct Chart {
    std::string name;
    ImVec2 plot_min;  // screen coordinates of the plotting area
    ImVec2 plot_max;
    double x0 = 0, x1 = 0;  // axis ranges
    double y0 = 0, y1 = 0;
  };
  std::vector<Chart> charts;
};

class ScalarsDraw {
 public:
  // Throws rt::ValueError when a session is null.
  explicit ScalarsDraw(std::vector<std::shared_ptr<const prof::SessionData>> sessions);

  void draw(ImVec2 size, float scale);
  // Session `session`'s data grew (see the contracts above).
  void append(size_t session, const prof::SessionGrowth& growth);

  void set_smoothing(double weight);  // clamped to [0, 0.999]
  double smoothing() const { return smoothing_; }
  void set_axis(OverlayAxis axis) {
    axis_ = axis;
    axis_chosen_ = true;
  }
  OverlayAxis axis() const { return axis_; }
  const std::vector<std::string>& names() const { return names_; }
  const ScalarsLayout& layout() const { return layout_; }

 private:
  void draw_toolbar(float scale);
  void draw_chart(ImDrawList* list, const std::string& name, ImVec2 min, ImVec2 max, float scale);
  void set_names_and_axis();

  std::vector<std::shared_ptr<const prof::SessionData>> data_;
  std::vector<ScalarSet> sets_;
  std::vector<std::string> names_;
  double smoothing_ = 0.6;
  OverlayAxis axis_ = OverlayAxis::Step;
  bool axis_chosen_ = false;  // by the user: append() keeps it
  ScalarsLayout layout_;
  std::vector<ScalarColumn> columns_;
};

}  // namespace rt::viz::draw
