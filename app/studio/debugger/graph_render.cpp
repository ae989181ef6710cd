#include "debugger/graph_render.h"

#include <QThread>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "debugger/graph_content.h"
#include "imgui_host/offscreen_render.h"
#include "rt/error.h"

namespace rt::studio {
namespace {

// Draws until the layout is ready (the layout thread works between frames).
QImage draw_laid_out(GraphContent& content, const OffscreenRenderOptions& options, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  QImage image = render_to_image(content, options);
  while (content.view().laying_out()) {
    if (std::chrono::steady_clock::now() > deadline)
      throw GraphLayoutError(fmt::format("the graph layout took longer than {} s (Graphviz on {} nodes); draw it "
                                         "smaller or wait longer",
                                         timeout_s, content.view().model()->visible_node_count()));
    QThread::msleep(20);
    image = render_to_image(content, options);
  }
  if (content.view().layout() == nullptr)
    throw GraphLayoutError(fmt::format("Graphviz could not lay out the graph ({} visible nodes)",
                                       content.view().model()->visible_node_count()));
  return image;
}

}  // namespace

QImage render_graph_image(const GraphRenderRequest& r, GraphRenderSummary* summary) {
  if (r.size.width() < 64 || r.size.height() < 64 || r.size.width() > 16384 || r.size.height() > 16384)
    throw rt::ValueError(fmt::format("size {}x{} is out of range: each side must be 64..16384 pixels",
                                     r.size.width(), r.size.height()));
  if (r.source.kind == SessionSource::Kind::Trace)
    throw rt::ValueError(fmt::format("{} is a trace: traces keep no autograd graph. Draw the graph from a store "
                                     "session instead (rtorch run --store DB script.py, then --session DB)",
                                     r.source.path.string()));
  auto data = load_session(r.source);
  if (const std::string why = profile_graph_error(*data, r.graph_index); !why.empty())
    throw rt::ValueError(fmt::format("{}: {}", describe(r.source), why));

  GraphContent content(nullptr);
  content.show_profile(std::move(data), r.graph_index);
  OffscreenRenderOptions options;
  options.size = r.size;
  options.scale = r.scale;
  options.frames = 4;  // toolbar widgets settle over the first frames
  QImage image = draw_laid_out(content, options, r.layout_timeout_s);
  // Modules open one at a time, outer ones first and the costliest first among siblings, each kept only while
  // the fitted picture stays readable and within max_nodes; a kept module's children become candidates.
  viz::GraphModel& model = *content.view().model();
  const viz::GraphAnnotations& costs = *content.annotations();
  const auto costlier = [&](int a, int b) {
    const auto& ca = model.cluster(a);
    const auto& cb = model.cluster(b);
    if (ca.depth != cb.depth) return ca.depth < cb.depth;
    return costs.cluster(a).total_ns() > costs.cluster(b).total_ns();
  };
  std::vector<int> candidates = model.cluster(0).children;
  for (int tries = 0; !candidates.empty() && tries < r.max_expansions; ++tries) {
    std::sort(candidates.begin(), candidates.end(), costlier);
    const int c = candidates.front();
    candidates.erase(candidates.begin());
    if (!model.expand(c).expanded) continue;
    if (model.visible_node_count() > r.max_nodes) {
      model.collapse(c);
      continue;
    }
    content.view().expand(0);  // the root is expanded already: this lays out the new expansion
    QImage next = draw_laid_out(content, options, r.layout_timeout_s);
    if (content.view().viewport().scale() < r.min_scale) {
      model.collapse(c);
      content.view().expand(0);
      image = draw_laid_out(content, options, r.layout_timeout_s);  // the cached layout from before
      continue;
    }
    image = std::move(next);
    const auto& children = model.cluster(c).children;
    candidates.insert(candidates.end(), children.begin(), children.end());
  }
  if (summary) {
    summary->backward_index = content.profile_graph()->backward_index;
    summary->graphs = content.profile_data()->graphs.size();
    summary->ops = content.view().model()->op_count();
    summary->shown = content.view().visible()->nodes.size();
    summary->matched = content.annotations()->matched_ops();
  }
  return image;
}

GraphRenderSummary render_graph_png(const GraphRenderRequest& r) {
  if (r.output.empty()) throw rt::ValueError("no output PNG path given (--output FILE.png)");
  GraphRenderSummary summary;
  const QImage image = render_graph_image(r, &summary);
  if (!image.save(QString::fromStdString(r.output.string()), "PNG"))
    throw rt::Error(fmt::format("cannot write '{}' (does its folder exist and is it writable?)", r.output.string()));
  return summary;
}

}  // namespace rt::studio
