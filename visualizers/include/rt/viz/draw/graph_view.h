// rt/viz/draw/graph_view.h — the autograd graph drawn with Dear ImGui: op boxes (name + output shape),
// module clusters as titled rounded rectangles (click a title to collapse, a collapsed box to expand),
// Bézier edges with arrowheads, pan/zoom/fit, search, hover tooltips with time and memory, and the
// backward debugger's node highlighted and revealed.
//
//   rt::viz::draw::GraphView view;                                  // owns a GraphLayouter (one layout thread)
//   view.set_graph(std::make_shared<rt::viz::GraphModel>(rt::autograd::snapshot_graph({loss})));
//   view.set_highlight(paused->node.id);                            // the debugger's node, or std::nullopt
//   view.draw(ImGui::GetContentRegionAvail(), frame.scale());       // each frame; polls the layout
//   if (view.laying_out()) frame.request_another_frame();
//
// Contracts
// - Layouts are requested from the GraphLayouter whenever the visible graph changes (expand, collapse,
//   reveal, new graph, new font size) and polled each frame; until one is ready the previous layout (if
//   any) stays on screen with a "laying out..." note. A layout that failed shows its error.
// - The model's message (empty graph, node limit) and refused expansions are shown in the view.
// - Input (only while the mouse is over the canvas): drag pans, the wheel zooms about the mouse, F fits
//   the graph, a click selects a node (selected_node()), a click on an expanded cluster's title collapses
//   it, a click on a collapsed cluster expands it. New layouts are fitted to the view until the user
//   pans or zooms (F or Fit fits again and resumes that). Fitting never magnifies beyond 1:1.
// - Annotations (set_annotations, a profiling session's time and memory per op) show on every node that
//   matched a record, after its output shapes ("[32, 64]  ·  0.41 ms · 48.0 KiB": forward + backward time,
//   forward memory; a collapsed module shows its ops' sums), and in full in its tooltip.
// - set_highlight(id) reveals the op with that graph id (or highlights the collapsed cluster hiding it
//   when revealing would pass the node limit) and scrolls it into view once its layout is ready; the
//   node gets a bright outline and its edges are drawn bright. When the fitted graph would be drawn too small
//   to read (below 0.9:1), a new layout with a highlighted node is shown at 0.9:1 centred on that node instead.
// - draw() needs the ImGui context current (it measures text with ImGui::CalcTextSize). Not thread-safe.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/viz/graph_annotations.h"
#include "rt/viz/graph_layouter.h"
#include "rt/viz/graph_model.h"
#include "rt/viz/graph_search.h"
#include "rt/viz/graph_viewport.h"

namespace rt::viz::draw {

class GraphView {
 public:
  GraphView();
  ~GraphView();
  GraphView(const GraphView&) = delete;
  GraphView& operator=(const GraphView&) = delete;

  // Replaces the graph (null clears it); keeps the highlight id. Annotations belong to one graph: pass
  // them with it or call set_annotations after.
  void set_graph(std::shared_ptr<GraphModel> model);
  void set_annotations(std::shared_ptr<const GraphAnnotations> annotations);
  void set_highlight(std::optional<uint64_t> graph_id);
  // Runs the search box's query: reveals and centres the first hit. Returns the number of hits.
  size_t search(const std::string& query);

  void draw(ImVec2 size, float scale);

  const std::shared_ptr<GraphModel>& model() const { return model_; }
  bool laying_out() const { return pending_; }
  const GraphLayout* layout() const { return layout_.get(); }
  // The visible graph the current layout shows (null until one is ready).
  const VisibleGraph* visible() const { return layout_ ? shown_.get() : nullptr; }
  const GraphHighlight& highlight() const { return highlight_; }
  std::optional<uint64_t> highlight_id() const { return highlight_id_; }
  const GraphViewport& viewport() const { return viewport_; }
  // Screen rectangle of visible node i in the last frame (device pixels).
  std::optional<Rect> node_screen_rect(int node) const;
  ImVec2 canvas_min() const { return canvas_min_; }
  ImVec2 canvas_max() const { return canvas_max_; }
  // The op (graph id) last clicked; nullopt after set_graph or a click on a cluster/background.
  std::optional<uint64_t> selected_node() const { return selected_; }
  const std::string& notice() const { return notice_; }

  void expand(int cluster);
  void collapse(int cluster);
  void fit();

 private:
  void request_layout();
  void poll_layout();
  void update_highlight();
  void draw_toolbar(float scale);
  void draw_canvas(ImVec2 min, ImVec2 max, float scale);
  void draw_clusters(ImDrawList* list, float scale);
  void draw_edges(ImDrawList* list, float scale, int hovered_edge);
  void draw_nodes(ImDrawList* list, float scale, int hovered_node);
  void handle_input(ImVec2 min, ImVec2 max, float scale, const GraphHit& hit, bool dragging_canvas);
  void tooltip_for_node(int node) const;
  void tooltip_for_edge(int edge) const;
  bool node_is_highlighted(int node) const { return node == highlight_.node && node >= 0; }

  std::unique_ptr<GraphLayouter> layouter_;
  float font_size_ = 0;
  std::shared_ptr<GraphModel> model_;
  std::shared_ptr<const GraphAnnotations> annotations_;
  std::shared_ptr<const VisibleGraph> requested_;  // what the pending ticket lays out
  std::shared_ptr<const VisibleGraph> shown_;      // what layout_ shows
  std::shared_ptr<const GraphLayout> layout_;
  LayoutTicket ticket_ = 0;
  bool pending_ = false;
  bool needs_fit_ = true;
  bool user_moved_ = false;  // panned or zoomed since the last fit
  bool center_highlight_ = false;
  std::string layout_error_;
  std::string notice_;  // refused expansion, search result
  std::optional<uint64_t> highlight_id_;
  GraphHighlight highlight_;
  std::optional<uint64_t> selected_;
  GraphViewport viewport_;
  ImVec2 canvas_min_{}, canvas_max_{};
  char query_[128] = {};
  std::vector<GraphSearchHit> hits_;
  size_t hit_cursor_ = 0;
};

}  // namespace rt::viz::draw
