#include "rt/viz/draw/graph_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {
namespace {

constexpr ImU32 kNodeFill = IM_COL32(48, 54, 64, 255);
constexpr ImU32 kNodeBorder = IM_COL32(105, 112, 124, 255);
constexpr ImU32 kLeafFill = IM_COL32(38, 62, 52, 255);
constexpr ImU32 kLeafBorder = IM_COL32(92, 150, 118, 255);
constexpr ImU32 kCollapsedFill = IM_COL32(58, 52, 78, 255);
constexpr ImU32 kCollapsedBorder = IM_COL32(140, 120, 200, 255);
constexpr ImU32 kEdge = IM_COL32(140, 146, 158, 200);
constexpr ImU32 kEdgeHover = IM_COL32(230, 234, 240, 255);
constexpr ImU32 kHighlight = IM_COL32(255, 196, 40, 255);
constexpr ImU32 kSelected = IM_COL32(90, 170, 255, 255);

ImU32 cluster_fill(int depth) {
  const int v = std::min(40 + depth * 7, 70);
  return IM_COL32(v, v + 4, v + 12, 150);
}

Size measure_text(std::string_view s) {
  const ImVec2 v = ImGui::CalcTextSize(s.data(), s.data() + s.size());
  return {double(v.x), double(v.y)};
}

std::string format_bytes_short(int64_t b) {
  const double v = double(b);
  if (v >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", v / (1024.0 * 1024 * 1024));
  if (v >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", v / (1024.0 * 1024));
  if (v >= 1024.0) return fmt::format("{:.1f} KiB", v / 1024.0);
  return fmt::format("{} B", b);
}

// "0.41 ms · 48.0 KiB": what the profiler measured for a node (forward + backward time, forward memory).
std::string cost_text(const OpCost& c) {
  if (c.forward_calls + c.backward_calls == 0) return {};
  std::string s = format_duration(c.total_ns());
  if (c.bytes > 0) s += " · " + format_bytes_short(c.bytes);
  return s;
}

// Annotated graphs show each node's cost after its output shapes, so a picture without a mouse shows it too.
void add_costs(VisibleGraph& g, const GraphAnnotations& costs) {
  for (VisibleNode& n : g.nodes) {
    const std::string c = cost_text(costs.node(n));
    if (!c.empty()) n.subtitle = n.subtitle.empty() ? c : n.subtitle + "  ·  " + c;
  }
  g.key += "|costs";
}

}  // namespace

GraphView::GraphView() : layouter_(std::make_unique<GraphLayouter>(measure_text)) {}
GraphView::~GraphView() = default;

void GraphView::set_graph(std::shared_ptr<GraphModel> model) {
  model_ = std::move(model);
  annotations_.reset();
  layout_.reset();
  shown_.reset();
  requested_.reset();
  pending_ = false;
  layout_error_.clear();
  notice_.clear();
  selected_.reset();
  hits_.clear();
  needs_fit_ = true;
  user_moved_ = false;
  highlight_ = {};
  if (model_ && highlight_id_) update_highlight();
  if (model_ && !model_->empty()) request_layout();
}

void GraphView::set_annotations(std::shared_ptr<const GraphAnnotations> annotations) {
  annotations_ = std::move(annotations);
  request_layout();
}

void GraphView::set_highlight(std::optional<uint64_t> graph_id) {
  if (graph_id == highlight_id_) return;
  highlight_id_ = graph_id;
  highlight_ = {};
  if (!model_) return;
  update_highlight();
  request_layout();
}

void GraphView::update_highlight() {
  if (!highlight_id_) return;
  const int op = model_->find_op(*highlight_id_);
  if (op < 0) return;
  const ExpandResult r = model_->reveal(op);
  if (!r.expanded) notice_ = r.message;
  center_highlight_ = true;
}

size_t GraphView::search(const std::string& query) {
  if (!model_) return 0;
  hits_ = search_graph(*model_, query);
  hit_cursor_ = 0;
  if (hits_.empty()) {
    notice_ = query.empty() ? "" : fmt::format("no op matches '{}'", query);
    return 0;
  }
  const uint64_t id = model_->op(hits_[0].op).id;
  const ExpandResult r = model_->reveal(hits_[0].op);
  notice_ = r.expanded ? fmt::format("{} match{}", hits_.size(), hits_.size() == 1 ? "" : "es") : r.message;
  selected_ = id;
  center_highlight_ = true;
  request_layout();
  return hits_.size();
}

void GraphView::expand(int cluster) {
  if (!model_) return;
  const ExpandResult r = model_->expand(cluster);
  notice_ = r.expanded ? "" : r.message;
  request_layout();
}

void GraphView::collapse(int cluster) {
  if (!model_) return;
  model_->collapse(cluster);
  notice_.clear();
  request_layout();
}

void GraphView::fit() {
  if (!layout_) return;
  // The strip at the bottom holds the key to the node colors: the fitted graph stays above it.
  const double key_strip = font_size_ > 0 ? double(font_size_) * 1.2 + 14.0 : 0.0;
  const Size screen{double(canvas_max_.x - canvas_min_.x), std::max(1.0, double(canvas_max_.y - canvas_min_.y) - key_strip)};
  viewport_.fit(layout_->bounds, screen);
  // Small graphs stay at their natural size (crisp text) instead of being blown up, centred.
  if (viewport_.scale() > 1.0) viewport_.zoom_about({screen.w / 2, screen.h / 2}, 1.0 / viewport_.scale());
}

void GraphView::request_layout() {
  if (!model_ || model_->empty()) return;
  auto built = std::make_shared<VisibleGraph>(model_->visible_graph());
  if (annotations_ && annotations_->matched_ops() > 0) add_costs(*built, *annotations_);
  std::shared_ptr<const VisibleGraph> visible = std::move(built);
  if (requested_ && requested_->key == visible->key && pending_) return;
  if (shown_ && shown_->key == visible->key && layout_ && !pending_) {
    highlight_ = highlight_id_ ? model_->highlight(*highlight_id_, *shown_) : GraphHighlight{};
    return;
  }
  // The layouter measures with ImGui, so requests are made inside draw(); remember to send it there.
  requested_ = std::move(visible);
  pending_ = true;
  ticket_ = 0;
}

void GraphView::poll_layout() {
  if (!pending_ || !requested_) return;
  if (ticket_ == 0) ticket_ = layouter_->request(requested_);
  const LayoutResult r = layouter_->poll(ticket_);
  switch (r.status) {
    case LayoutStatus::Pending:
      return;
    case LayoutStatus::Superseded:
      ticket_ = layouter_->request(requested_);
      return;
    case LayoutStatus::Failed:
      layout_error_ = r.error;
      pending_ = false;
      return;
    case LayoutStatus::Ready:
      break;
  }
  pending_ = false;
  layout_error_.clear();
  layout_ = r.layout;
  shown_ = requested_;
  highlight_ = highlight_id_ ? model_->highlight(*highlight_id_, *shown_) : GraphHighlight{};
  // Until the user pans or zooms, every new layout is fitted (a grown graph stays in view).
  if (needs_fit_ || !user_moved_) {
    fit();
    needs_fit_ = false;
    // The paused node of a graph too large to read when fitted: show it at a readable zoom instead.
    constexpr double kReadable = 0.9;
    if (highlight_.node >= 0 && viewport_.scale() < kReadable) {
      const Size canvas{double(canvas_max_.x - canvas_min_.x), double(canvas_max_.y - canvas_min_.y)};
      viewport_.zoom_about({canvas.w / 2, canvas.h / 2}, kReadable / viewport_.scale());
      viewport_.center_on(layout_->nodes[size_t(highlight_.node)].center(), {canvas.w / 2, canvas.h / 2});
    }
  }
}

std::optional<Rect> GraphView::node_screen_rect(int node) const {
  if (!layout_ || node < 0 || size_t(node) >= layout_->nodes.size()) return std::nullopt;
  Rect r = viewport_.to_screen(layout_->nodes[size_t(node)]);
  r.x += canvas_min_.x;
  r.y += canvas_min_.y;
  return r;
}

void GraphView::draw(ImVec2 size, float scale) {
  const float font = ImGui::GetFontSize();
  if (font != font_size_) {
    if (font_size_ != 0) {
      layouter_->clear_cache();
      shown_.reset();
      layout_.reset();
      needs_fit_ = true;
    }
    font_size_ = font;
    if (model_ && !model_->empty()) {
      pending_ = false;
      request_layout();
    }
  }
  const ImVec2 start = ImGui::GetCursorScreenPos();
  draw_toolbar(scale);
  const ImVec2 after = ImGui::GetCursorScreenPos();
  const ImVec2 min(start.x, after.y);
  const ImVec2 max(start.x + size.x, start.y + size.y);
  if (max.y - min.y < 8 * scale) return;
  const bool resized = (max.x - min.x) != (canvas_max_.x - canvas_min_.x) || (max.y - min.y) != (canvas_max_.y - canvas_min_.y);
  canvas_min_ = min;
  canvas_max_ = max;
  if (resized && layout_ && !needs_fit_) fit();
  poll_layout();
  draw_canvas(min, max, scale);
  ImGui::SetCursorScreenPos(max);
}

void GraphView::draw_toolbar(float scale) {
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x + 6 * scale, ImGui::GetCursorScreenPos().y + 4 * scale));
  ImGui::SetNextItemWidth(200 * scale);
  const bool entered = ImGui::InputTextWithHint("##graph_search", "search ops, modules", query_, sizeof query_,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Find") || entered) search(query_);
  ImGui::SameLine();
  if (ImGui::Button("Fit (F)")) {
    fit();
    user_moved_ = false;
  }
  if (model_ && !model_->empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImColor(palette::kTextDim), "%zu ops · %zu shown", model_->op_count(),
                       shown_ ? shown_->nodes.size() : size_t(0));
  }
  if (!notice_.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImColor(palette::kCursor), "%s", notice_.c_str());
  }
  ImGui::SetCursorScreenPos(ImVec2(ImGui::GetCursorScreenPos().x, ImGui::GetCursorScreenPos().y + 2 * scale));
}

void GraphView::draw_canvas(ImVec2 min, ImVec2 max, float scale) {
  // One invisible item owns the canvas's mouse input, so a drag on it pans instead of moving the window.
  ImGui::SetCursorScreenPos(min);
  ImGui::InvisibleButton("##graph_canvas", ImVec2(std::max(1.0f, max.x - min.x), std::max(1.0f, max.y - min.y)));
  const bool canvas_hovered = ImGui::IsItemHovered();
  const bool canvas_active = ImGui::IsItemActive();
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->AddRectFilled(min, max, palette::kBackground);
  list->PushClipRect(min, max, true);
  // Faint dot grid, so panning is visible even over empty space.
  const double step = 24.0 * viewport_.scale() * scale;
  if (layout_ && step > 8) {
    const float ox = float(std::fmod(viewport_.offset().x, step));
    const float oy = float(std::fmod(viewport_.offset().y, step));
    for (float x = min.x + ox; x < max.x; x += float(step))
      for (float y = min.y + oy; y < max.y; y += float(step)) list->AddRectFilled({x, y}, {x + scale, y + scale}, palette::kGrid);
  }

  auto centered_text = [&](const std::string& text, ImU32 color, float dy) {
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    list->AddText({(min.x + max.x - ts.x) / 2, (min.y + max.y - ts.y) / 2 + dy}, color, text.c_str());
  };
  if (!model_) {
    centered_text("No graph yet: arm the debugger and run a backward pass", palette::kTextDim, 0);
  } else if (model_->empty()) {
    centered_text(model_->message().empty() ? "The graph is empty" : model_->message(), palette::kTextDim, 0);
  }

  GraphHit hit;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool mouse_in = canvas_hovered && mouse.x >= min.x && mouse.x < max.x && mouse.y >= min.y && mouse.y < max.y;
  if (layout_ && mouse_in) {
    const Point g = viewport_.to_graph({double(mouse.x - min.x), double(mouse.y - min.y)});
    hit = hit_test(*layout_, g, 4.0 * scale / viewport_.scale());
  }
  if (layout_) {
    ImGui::PushClipRect(min, max, true);
    draw_clusters(list, scale);
    draw_edges(list, scale, hit.kind == GraphHit::Kind::Edge ? hit.index : -1);
    draw_nodes(list, scale, hit.kind == GraphHit::Kind::Node ? hit.index : -1);
    ImGui::PopClipRect();
  }
  if (layout_) {
    // Key to the node colors, bottom left.
    const std::pair<const char*, std::pair<ImU32, ImU32>> keys[] = {{"op", {kNodeFill, kNodeBorder}},
                                                                    {"parameter", {kLeafFill, kLeafBorder}},
                                                                    {"module (click to expand)", {kCollapsedFill, kCollapsedBorder}},
                                                                    {"paused here", {kNodeFill, kHighlight}}};
    const float line = ImGui::GetTextLineHeight();
    float kx = min.x + 10 * scale;
    const float ky = max.y - line - 10 * scale;
    float kw = 0;
    for (const auto& k : keys) kw += line + 6 * scale + ImGui::CalcTextSize(k.first).x + 14 * scale;
    list->AddRectFilled({kx - 6 * scale, ky - 4 * scale}, {kx + kw, ky + line + 4 * scale}, IM_COL32(20, 22, 26, 220), 4 * scale);
    for (const auto& [text, colors] : keys) {
      list->AddRectFilled({kx, ky + 1 * scale}, {kx + line, ky + line - 1 * scale}, colors.first, 2 * scale);
      list->AddRect({kx, ky + 1 * scale}, {kx + line, ky + line - 1 * scale}, colors.second, 2 * scale, 0,
                    (colors.second == kHighlight ? 2.0f : 1.0f) * scale);
      kx += line + 6 * scale;
      list->AddText({kx, ky}, palette::kTextDim, text);
      kx += ImGui::CalcTextSize(text).x + 14 * scale;
    }
  }
  // Status lines over the canvas: model message, layout progress, layout error.
  float y = min.y + 6 * scale;
  auto status = [&](const std::string& text, ImU32 color) {
    const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    const ImVec2 p(max.x - ts.x - 12 * scale, y);
    list->AddRectFilled({p.x - 6 * scale, p.y - 2 * scale}, {p.x + ts.x + 6 * scale, p.y + ts.y + 2 * scale},
                        IM_COL32(20, 22, 26, 230), 4 * scale);
    list->AddText(p, color, text.c_str());
    y += ts.y + 8 * scale;
  };
  if (model_ && !model_->empty() && !model_->message().empty()) status(model_->message(), palette::kCursor);
  if (pending_) status("laying out...", palette::kTextDim);
  if (!layout_error_.empty()) status("layout failed: " + layout_error_, palette::kPeak);
  list->PopClipRect();

  if (mouse_in || canvas_active) handle_input(min, max, scale, hit, canvas_active);
  if (center_highlight_ && layout_ && !pending_) {
    center_highlight_ = false;
    int node = highlight_.node;
    if (selected_ && shown_) {
      const int op = model_->find_op(*selected_);
      if (op >= 0 && size_t(op) < shown_->op_to_node.size() && highlight_.node < 0) node = shown_->op_to_node[size_t(op)];
    }
    if (node >= 0) {
      const Rect r = viewport_.to_screen(layout_->nodes[size_t(node)]);
      const Rect view{0, 0, double(max.x - min.x), double(max.y - min.y)};
      if (!view.contains(r, -20)) viewport_.center_on(layout_->nodes[size_t(node)].center(), view.center());
    }
  }
}

void GraphView::draw_clusters(ImDrawList* list, float scale) {
  const float zoom = float(viewport_.scale());
  const ImVec2 o = canvas_min_;
  for (size_t i = 0; i < layout_->clusters.size() && i < shown_->clusters.size(); ++i) {
    const ClusterBox& c = layout_->clusters[i];
    const Rect b = viewport_.to_screen(c.box);
    const Rect t = viewport_.to_screen(c.title);
    const int depth = model_->cluster(shown_->clusters[i].cluster).depth;
    const ImVec2 bmin(o.x + float(b.x), o.y + float(b.y)), bmax(o.x + float(b.right()), o.y + float(b.bottom()));
    list->AddRectFilled(bmin, bmax, cluster_fill(depth), 6 * scale * zoom);
    list->AddRect(bmin, bmax, IM_COL32(120, 128, 145, 160), 6 * scale * zoom, 0, 1.0f * scale);
    const float fs = font_size_ * zoom;
    if (fs >= 6) {
      const ImVec2 tp(o.x + float(t.x) + 6 * scale * zoom, o.y + float(t.y) + 2 * scale * zoom);
      list->AddText(nullptr, fs, tp, palette::kText, ("[-] " + shown_->clusters[i].title).c_str());
    }
  }
}

void GraphView::draw_edges(ImDrawList* list, float scale, int hovered_edge) {
  const float zoom = float(viewport_.scale());
  const ImVec2 o = canvas_min_;
  auto screen = [&](Point p) {
    const Point s = viewport_.to_screen(p);
    return ImVec2(o.x + float(s.x), o.y + float(s.y));
  };
  auto is_hl = [&](int e) {
    return std::find(highlight_.in_edges.begin(), highlight_.in_edges.end(), e) != highlight_.in_edges.end() ||
           std::find(highlight_.out_edges.begin(), highlight_.out_edges.end(), e) != highlight_.out_edges.end();
  };
  // Highlighted edges last, so they are drawn on top.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < layout_->edges.size(); ++i) {
      const bool hl = is_hl(int(i)) || int(i) == hovered_edge;
      if (hl != (pass == 1)) continue;
      const EdgeSpline& e = layout_->edges[i];
      if (e.points.size() < 4) continue;
      const ImU32 color = is_hl(int(i)) ? kHighlight : (int(i) == hovered_edge ? kEdgeHover : kEdge);
      const float w = (hl ? 2.4f : 1.4f) * scale * std::clamp(zoom, 0.6f, 1.6f);
      for (size_t k = 0; k + 3 < e.points.size(); k += 3)
        list->AddBezierCubic(screen(e.points[k]), screen(e.points[k + 1]), screen(e.points[k + 2]), screen(e.points[k + 3]),
                             color, w);
      if (e.has_head) {
        const ImVec2 tip = screen(e.head);
        const ImVec2 from = screen(e.points.back());
        arrow(list, from, tip, color, w, 8 * scale * std::clamp(zoom, 0.5f, 1.5f));
      }
      const VisibleEdge& ve = shown_->edges[i];
      if (ve.count > 1 && font_size_ * zoom >= 7) {
        const ImVec2 mid = screen(e.points[e.points.size() / 2]);
        list->AddText(nullptr, font_size_ * zoom * 0.85f, {mid.x + 4 * scale, mid.y}, palette::kTextDim,
                      fmt::format("×{}", ve.count).c_str());
      }
    }
  }
}

void GraphView::draw_nodes(ImDrawList* list, float scale, int hovered_node) {
  const float zoom = float(viewport_.scale());
  const ImVec2 o = canvas_min_;
  const float fs = font_size_ * zoom;
  const int selected_node = [&] {
    if (!selected_) return -1;
    const int op = model_->find_op(*selected_);
    return op >= 0 && size_t(op) < shown_->op_to_node.size() ? shown_->op_to_node[size_t(op)] : -1;
  }();
  for (size_t i = 0; i < layout_->nodes.size() && i < shown_->nodes.size(); ++i) {
    const VisibleNode& n = shown_->nodes[i];
    const Rect r = viewport_.to_screen(layout_->nodes[i]);
    const ImVec2 a(o.x + float(r.x), o.y + float(r.y)), b(o.x + float(r.right()), o.y + float(r.bottom()));
    const bool leaf = n.kind == VisibleKind::Op && model_->op(n.index).is_leaf;
    ImU32 fill = kNodeFill, border = kNodeBorder;
    if (n.kind == VisibleKind::Cluster) fill = kCollapsedFill, border = kCollapsedBorder;
    else if (leaf) fill = kLeafFill, border = kLeafBorder;
    const float round = 4 * scale * zoom;
    if (int(i) == hovered_node) fill = IM_COL32((fill >> 0 & 0xFF) + 18, (fill >> 8 & 0xFF) + 18, (fill >> 16 & 0xFF) + 18, 255);
    list->AddRectFilled(a, b, fill, round);
    if (n.kind == VisibleKind::Cluster) {
      // A collapsed module reads as a stack of boxes.
      list->AddRect({a.x + 3 * scale * zoom, a.y + 3 * scale * zoom}, {b.x + 3 * scale * zoom, b.y + 3 * scale * zoom},
                    IM_COL32(140, 120, 200, 110), round, 0, 1.0f * scale);
    }
    list->AddRect(a, b, border, round, 0, 1.2f * scale);
    if (int(i) == selected_node) list->AddRect({a.x - 2 * scale, a.y - 2 * scale}, {b.x + 2 * scale, b.y + 2 * scale}, kSelected, round, 0, 2.0f * scale);
    if (node_is_highlighted(int(i))) {
      list->AddRect({a.x - 4 * scale, a.y - 4 * scale}, {b.x + 4 * scale, b.y + 4 * scale}, IM_COL32(255, 196, 40, 90), round, 0,
                    6.0f * scale);
      list->AddRect({a.x - 2 * scale, a.y - 2 * scale}, {b.x + 2 * scale, b.y + 2 * scale}, kHighlight, round, 0, 2.5f * scale);
    }
    if (fs < 5) continue;
    const float pad_x = float(8 * zoom), pad_y = float(4 * zoom);
    const ImVec2 tmin(a.x + pad_x, a.y + pad_y), tmax(b.x - pad_x * 0.5f, b.y);
    text_in_box(list, fs, {tmin.x, tmin.y}, {tmax.x, tmin.y + fs + 1}, n.title, palette::kText);
    if (!n.subtitle.empty())
      text_in_box(list, fs, {tmin.x, tmin.y + fs}, {tmax.x, tmin.y + 2 * fs + 1}, n.subtitle, palette::kTextDim);
  }
}

void GraphView::handle_input(ImVec2 min, ImVec2 max, float scale, const GraphHit& hit, bool dragging_canvas) {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 m = io.MousePos;
  const Point local{double(m.x - min.x), double(m.y - min.y)};
  if (io.MouseWheel != 0 && layout_) {
    viewport_.zoom_about(local, std::pow(1.2, double(io.MouseWheel)));
    user_moved_ = true;
  }
  if (dragging_canvas && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2 * scale)) {
    viewport_.pan({double(io.MouseDelta.x), double(io.MouseDelta.y)});
    user_moved_ = true;
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeAll);
  }
  if (ImGui::IsKeyPressed('F', false) && !io.WantTextInput) {
    fit();
    user_moved_ = false;
  }
  (void)max;
  if (!layout_) return;
  // A release that did not drag (ImGui keeps the press's longest drag distance until the next press).
  const float slop = 3 * scale;
  const bool clicked = ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[ImGuiMouseButton_Left] < slop * slop;
  if (hit.kind == GraphHit::Kind::Node) {
    tooltip_for_node(hit.index);
    if (clicked) {
      const VisibleNode& n = shown_->nodes[size_t(hit.index)];
      if (n.kind == VisibleKind::Cluster) {
        expand(n.index);
      } else {
        selected_ = model_->op(n.index).id;
      }
    }
  } else if (hit.kind == GraphHit::Kind::Edge) {
    tooltip_for_edge(hit.index);
  } else if (hit.kind == GraphHit::Kind::Cluster) {
    const Point g = viewport_.to_graph(local);
    const bool on_title = layout_->clusters[size_t(hit.index)].title.contains(g);
    if (on_title) {
      ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
      ImGui::SetTooltip("%s - click to collapse", shown_->clusters[size_t(hit.index)].title.c_str());
      if (clicked) collapse(shown_->clusters[size_t(hit.index)].cluster);
    }
  } else if (clicked) {
    selected_.reset();
  }
}

void GraphView::tooltip_for_node(int node) const {
  const VisibleNode& n = shown_->nodes[size_t(node)];
  ImGui::BeginTooltip();
  if (n.kind == VisibleKind::Cluster) {
    const ModuleCluster& c = model_->cluster(n.index);
    ImGui::Text("%s", c.path.c_str());
    if (!c.type.empty()) ImGui::TextColored(ImColor(palette::kTextDim), "%s", c.type.c_str());
    ImGui::Text("%zu ops - click to expand", c.op_count);
  } else {
    const autograd::GraphNodeInfo& op = model_->op(n.index);
    ImGui::Text("%s", op.name.c_str());
    if (!op.forward_op.empty()) ImGui::TextColored(ImColor(palette::kTextDim), "forward op  %s", op.forward_op.c_str());
    if (!op.module.empty()) ImGui::TextColored(ImColor(palette::kTextDim), "module      %s", op.module.c_str());
    ImGui::TextColored(ImColor(palette::kTextDim), "output      %s", format_output_shapes(op).c_str());
    if (!op.is_leaf) ImGui::TextColored(ImColor(palette::kTextDim), "sequence    %llu", (unsigned long long)op.sequence_nr);
  }
  if (annotations_) {
    const OpCost& c = annotations_->node(n);
    ImGui::Separator();
    ImGui::Text("forward   %s", format_duration(c.forward_ns).c_str());
    ImGui::Text("backward  %s", format_duration(c.backward_ns).c_str());
    ImGui::Text("memory    %s", format_bytes_short(c.bytes).c_str());
  }
  if (node_is_highlighted(node)) ImGui::TextColored(ImColor(kHighlight), "the debugger is paused here");
  ImGui::EndTooltip();
}

void GraphView::tooltip_for_edge(int edge) const {
  const VisibleEdge& e = shown_->edges[size_t(edge)];
  ImGui::BeginTooltip();
  ImGui::Text("%s -> %s", shown_->nodes[size_t(e.source)].title.c_str(), shown_->nodes[size_t(e.target)].title.c_str());
  ImGui::TextColored(ImColor(palette::kTextDim), "gradient shape %s", format_shape(e.shape).c_str());
  if (e.count > 1) ImGui::TextColored(ImColor(palette::kTextDim), "%d tensors", e.count);
  ImGui::EndTooltip();
}

}  // namespace rt::viz::draw
