// rt/viz/graph_viewport.h — pan/zoom arithmetic and hit-testing for a laid-out graph.
//
//   rt::viz::GraphViewport vp;
//   vp.fit(layout.bounds, {panel_w, panel_h});                  // whole graph, centred, with a margin
//   vp.zoom_about(mouse, wheel > 0 ? 1.25 : 0.8);               // the point under the cursor stays put
//   vp.pan({drag_dx, drag_dy});
//   rt::viz::GraphHit hit = rt::viz::hit_test(layout, vp.to_graph(mouse), 4.0 / vp.scale());
//   if (hit.kind == rt::viz::GraphHit::Kind::Node) open(visible.nodes[hit.index]);
//
// Contracts
// - screen = graph * scale + offset, in the panel's pixel coordinates (origin top-left).
// - scale stays within [min_scale, max_scale]; fit() of an empty rectangle resets to scale 1, offset 0.
// - hit_test prefers nodes, then edges (within `edge_tolerance` graph points of the flattened spline),
//   then clusters (the innermost containing the point); nodes drawn later win ties (higher index).
#pragma once
#include "rt/viz/graph_layout.h"

namespace rt::viz {

class GraphViewport {
 public:
  explicit GraphViewport(double min_scale = 0.02, double max_scale = 8.0);

  double scale() const { return scale_; }
  Point offset() const { return offset_; }
  Point to_screen(Point graph) const { return {graph.x * scale_ + offset_.x, graph.y * scale_ + offset_.y}; }
  Point to_graph(Point screen) const { return {(screen.x - offset_.x) / scale_, (screen.y - offset_.y) / scale_}; }
  Rect to_screen(const Rect& graph) const;

  void fit(const Rect& graph, Size screen, double margin_px = 20);
  void zoom_about(Point screen_anchor, double factor);
  void pan(Point screen_delta);
  // Keeps the scale and moves `graph` point to the screen point `at` (centre on a search hit).
  void center_on(Point graph, Point at);

 private:
  double clamp(double s) const;
  double min_scale_, max_scale_;
  double scale_ = 1.0;
  Point offset_;
};

struct GraphHit {
  enum class Kind : uint8_t { None, Node, Edge, Cluster };
  Kind kind = Kind::None;
  int index = -1;  // into GraphLayout::nodes / edges / clusters
};

GraphHit hit_test(const GraphLayout& layout, Point graph_point, double edge_tolerance = 3.0);

// Distance from p to the segment a-b.
double distance_to_segment(Point p, Point a, Point b);

}  // namespace rt::viz
