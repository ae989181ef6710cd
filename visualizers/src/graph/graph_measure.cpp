// measure_graph and flatten_spline: the layout's geometry that needs no Graphviz.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/error.h"
#include "rt/viz/graph_layout.h"

namespace rt::viz {

LayoutInput measure_graph(std::shared_ptr<const VisibleGraph> graph, const TextMeasure& measure, LayoutStyle style) {
  if (!graph) throw ValueError("measure_graph: no visible graph");
  if (!measure) throw ValueError("measure_graph: no text measure callback");
  LayoutInput in;
  in.style = style;
  auto line = [&](const std::string& text) {
    const Size s = measure(text);
    if (!(s.w >= 0) || !(s.h >= 0) || !std::isfinite(s.w) || !std::isfinite(s.h))
      throw ValueError(fmt::format("measure_graph: text measure returned {} x {} for '{}'", s.w, s.h, text));
    return s;
  };
  in.node_sizes.reserve(graph->nodes.size());
  for (const auto& n : graph->nodes) {
    Size t = line(n.title);
    if (!n.subtitle.empty()) {
      const Size s = line(n.subtitle);
      t = {std::max(t.w, s.w), t.h + s.h};
    }
    in.node_sizes.push_back({std::ceil(t.w + 2 * style.padding_x), std::ceil(t.h + 2 * style.padding_y)});
  }
  in.cluster_title_sizes.reserve(graph->clusters.size());
  for (const auto& c : graph->clusters) {
    const Size t = line(c.title);
    in.cluster_title_sizes.push_back({std::ceil(t.w), std::ceil(t.h)});
  }
  in.graph = std::move(graph);
  return in;
}

std::vector<Point> flatten_spline(const EdgeSpline& spline, int segments) {
  std::vector<Point> out;
  const auto& p = spline.points;
  if (p.empty()) return out;
  segments = std::max(segments, 1);
  out.push_back(p[0]);
  for (size_t i = 0; i + 3 < p.size(); i += 3) {
    for (int k = 1; k <= segments; ++k) {
      const double t = double(k) / segments, u = 1 - t;
      const double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
      out.push_back({a * p[i].x + b * p[i + 1].x + c * p[i + 2].x + d * p[i + 3].x,
                     a * p[i].y + b * p[i + 1].y + c * p[i + 2].y + d * p[i + 3].y});
    }
  }
  if (spline.has_head) out.push_back(spline.head);
  return out;
}

}  // namespace rt::viz
