// debugger/graph_render.h — draws the autograd graph a profiling session kept into a PNG, with the Graph
// panel's view and that session's per-op time and memory, for `rtorch-studio --render graph --session
// DB[:N] --output PNG [--size WxH]` and reports.
//
//   GraphRenderRequest r;
//   r.source = parse_store_argument("runs.sqlite:2");   // session 2; "runs.sqlite" alone: its newest
//   r.output = "graph.png";
//   render_graph_png(r);                                 // needs a QGuiApplication with OpenGL (xvfb-run)
//
// Contracts
// - Draws session.graphs[graph_index] (-1: the latest backward's, 0: the first's) as GraphContent shows it
//   in profile mode: module clusters collapsed as the panel starts, then opened one at a time (outer ones
//   first, the costliest first among siblings; at most `max_expansions` tries), each kept only while the
//   visible graph stays within `max_nodes` and the whole of it, fitted to the picture, is drawn at
//   `min_scale` or more (labels stay readable). The whole graph fitted (never magnified beyond 1:1),
//   nothing selected. A larger --size therefore shows more of the model's inside.
// - Waits for the layout thread (at most `layout_timeout_s`); throws GraphLayoutError when the layout
//   failed or did not finish in time.
// - Throws rt::ValueError before drawing for a bad size (each side 64..16384), an empty output path, a
//   trace (traces keep no autograd graph), a session that cannot be loaded (load_session's message) or one
//   without that graph (profile_graph_error's message). Throws rt::Error when the PNG cannot be written,
//   ImGuiHostError when no OpenGL context can be made.
#pragma once
#include <QImage>
#include <QSize>

#include <filesystem>

#include "rt/error.h"
#include "viz_panels/session_source.h"

namespace rt::studio {

class GraphLayoutError : public rt::Error {
 public:
  using rt::Error::Error;
};

struct GraphRenderRequest {
  SessionSource source;
  int graph_index = -1;
  std::filesystem::path output;
  QSize size{1600, 900};  // logical pixels
  double scale = 1.0;
  size_t max_nodes = 120;  // open module levels while the visible graph stays within this many nodes
  double min_scale = 0.8;  // ... and the fitted picture keeps at least this zoom
  int max_expansions = 24;  // modules tried
  double layout_timeout_s = 120;
};

// What was drawn, for the command's report.
struct GraphRenderSummary {
  uint64_t backward_index = 0;  // of the graph drawn
  size_t graphs = 0;            // graphs the session kept
  size_t ops = 0;               // nodes of the graph
  size_t shown = 0;             // visible nodes (ops and collapsed modules)
  size_t matched = 0;           // ops annotated with the session's records
};

QImage render_graph_image(const GraphRenderRequest& request, GraphRenderSummary* summary = nullptr);
GraphRenderSummary render_graph_png(const GraphRenderRequest& request);

}  // namespace rt::studio
