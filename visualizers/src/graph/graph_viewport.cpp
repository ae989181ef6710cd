#include "rt/viz/graph_viewport.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "rt/error.h"

namespace rt::viz {

GraphViewport::GraphViewport(double min_scale, double max_scale) : min_scale_(min_scale), max_scale_(max_scale) {
  if (!(min_scale > 0) || !(max_scale >= min_scale))
    throw ValueError(fmt::format("GraphViewport: scale range [{}, {}] must be positive and ordered", min_scale, max_scale));
  scale_ = clamp(1.0);
}

double GraphViewport::clamp(double s) const { return std::clamp(s, min_scale_, max_scale_); }

Rect GraphViewport::to_screen(const Rect& graph) const {
  const Point p = to_screen(Point{graph.x, graph.y});
  return {p.x, p.y, graph.w * scale_, graph.h * scale_};
}

void GraphViewport::fit(const Rect& graph, Size screen, double margin_px) {
  if (graph.w <= 0 || graph.h <= 0 || screen.w <= 0 || screen.h <= 0) {
    scale_ = clamp(1.0);
    offset_ = {};
    return;
  }
  const double aw = std::max(screen.w - 2 * margin_px, 1.0), ah = std::max(screen.h - 2 * margin_px, 1.0);
  scale_ = clamp(std::min(aw / graph.w, ah / graph.h));
  const Point c = graph.center();
  offset_ = {screen.w / 2 - c.x * scale_, screen.h / 2 - c.y * scale_};
}

void GraphViewport::zoom_about(Point anchor, double factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw ValueError(fmt::format("GraphViewport::zoom_about: zoom factor {} must be positive", factor));
  const Point g = to_graph(anchor);
  scale_ = clamp(scale_ * factor);
  offset_ = {anchor.x - g.x * scale_, anchor.y - g.y * scale_};
}

void GraphViewport::pan(Point d) {
  offset_.x += d.x;
  offset_.y += d.y;
}

void GraphViewport::center_on(Point graph, Point at) { offset_ = {at.x - graph.x * scale_, at.y - graph.y * scale_}; }

double distance_to_segment(Point p, Point a, Point b) {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0.0;
  t = std::clamp(t, 0.0, 1.0);
  return std::hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

GraphHit hit_test(const GraphLayout& layout, Point p, double edge_tolerance) {
  for (size_t i = layout.nodes.size(); i-- > 0;)
    if (layout.nodes[i].contains(p)) return {GraphHit::Kind::Node, int(i)};
  int best_edge = -1;
  double best = edge_tolerance;
  for (size_t e = 0; e < layout.edges.size(); ++e) {
    const auto line = flatten_spline(layout.edges[e]);
    for (size_t k = 0; k + 1 < line.size(); ++k) {
      const double d = distance_to_segment(p, line[k], line[k + 1]);
      if (d <= best) {
        best = d;
        best_edge = int(e);
      }
    }
  }
  if (best_edge >= 0) return {GraphHit::Kind::Edge, best_edge};
  int inner = -1;
  double inner_area = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < layout.clusters.size(); ++c) {
    const Rect& r = layout.clusters[c].box;
    if (r.contains(p) && r.w * r.h < inner_area) {
      inner_area = r.w * r.h;
      inner = int(c);
    }
  }
  if (inner >= 0) return {GraphHit::Kind::Cluster, inner};
  return {};
}

}  // namespace rt::viz
