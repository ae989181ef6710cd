// rt/viz/graph_layout.h — geometry of a laid-out visible graph (boxes, edge splines, cluster rectangles)
// and the Graphviz `dot` layout that produces it. Layouts are requested through a GraphLayouter
// (graph_layouter.h), which runs layout_with_dot on its layout thread.
//
//   rt::viz::TextMeasure measure = [](std::string_view s) {          // the view: ImGui::CalcTextSize
//     return rt::viz::Size{7.0 * double(s.size()), 14.0};
//   };
//   rt::viz::LayoutInput in = rt::viz::measure_graph(model.visible_graph(), measure);   // caller's thread
//   // ... on the layout thread only:
//   std::shared_ptr<const rt::viz::GraphLayout> layout = rt::viz::layout_with_dot(in);
//   for (size_t i = 0; i < layout->nodes.size(); ++i) draw_box(layout->nodes[i], in.graph->nodes[i].title);
//
// Contracts
// - Coordinates are points with the origin at the top-left of `bounds` and y growing down (screen
//   convention; Graphviz's y-up output is flipped). Boxes are {x, y, w, h} with (x, y) the top-left.
// - nodes[i] is visible node i's box, exactly the measured size: title and subtitle lines stacked,
//   plus `LayoutStyle` padding. edges[i] is visible edge i, source -> target, so the data flows down.
// - EdgeSpline::points are cubic Bézier control points p0 c1 c2 p1 c1 c2 p2 ... (3k+1 points) from the
//   source box's border toward the target's; `head` is the arrow tip on the target's border.
// - clusters[i] is VisibleGraph::clusters[i]'s rectangle; it contains the boxes of every visible node
//   inside it (nested clusters included) and a title strip of the measured title size at its top.
// - layout_with_dot calls Graphviz, which is not thread-safe: it throws rt::Error unless called on a
//   GraphLayouter's layout thread (it checks the thread id), and layout threads take turns.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rt/viz/graph_model.h"

namespace rt::viz {

struct Point {
  double x = 0, y = 0;
};
struct Size {
  double w = 0, h = 0;
};
struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  Point center() const { return {x + w / 2, y + h / 2}; }
  bool contains(Point p) const { return p.x >= x && p.x <= right() && p.y >= y && p.y <= bottom(); }
  bool contains(const Rect& r, double slack = 0) const {
    return r.x >= x - slack && r.y >= y - slack && r.right() <= right() + slack && r.bottom() <= bottom() + slack;
  }
  bool overlaps(const Rect& r) const { return x < r.right() && r.x < right() && y < r.bottom() && r.y < bottom(); }
};

// Size of one line of text in points, as the view will draw it.
using TextMeasure = std::function<Size(std::string_view text)>;

struct LayoutStyle {
  double padding_x = 8;      // text to box border, left and right
  double padding_y = 4;      // top and bottom
  double node_sep = 18;      // Graphviz nodesep, points
  double rank_sep = 30;      // Graphviz ranksep, points
  double cluster_margin = 8; // room around a cluster's members
};

// A visible graph with the box size of every node and the title size of every cluster, measured on the
// caller's thread (text measurement belongs to the view).
struct LayoutInput {
  std::shared_ptr<const VisibleGraph> graph;
  std::vector<Size> node_sizes;
  std::vector<Size> cluster_title_sizes;
  LayoutStyle style;
};
LayoutInput measure_graph(std::shared_ptr<const VisibleGraph> graph, const TextMeasure& measure, LayoutStyle style = {});

struct EdgeSpline {
  std::vector<Point> points;
  bool has_head = false;
  Point head;
};

struct ClusterBox {
  Rect box;
  Rect title;                // where the title goes, inside `box` at its top
};

struct GraphLayout {
  std::string key;           // VisibleGraph::key it was made for
  Rect bounds;               // everything, at (0, 0)
  std::vector<Rect> nodes;
  std::vector<EdgeSpline> edges;
  std::vector<ClusterBox> clusters;
  std::thread::id layout_thread;  // the thread that ran Graphviz
};

std::shared_ptr<const GraphLayout> layout_with_dot(const LayoutInput& input);

// Turns a Bézier spline into a polyline with `segments` steps per curve (drawing, hit-testing).
std::vector<Point> flatten_spline(const EdgeSpline& spline, int segments = 8);

}  // namespace rt::viz
