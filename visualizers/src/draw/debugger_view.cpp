#include "rt/viz/draw/debugger_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/dtype.h"
#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {
namespace {

constexpr ImU32 kBad = IM_COL32(255, 92, 80, 255);
constexpr ImU32 kBadRow = IM_COL32(110, 30, 30, 120);
constexpr ImU32 kPausedBand = IM_COL32(92, 70, 16, 255);
constexpr ImU32 kPausedBadBand = IM_COL32(110, 34, 30, 255);
constexpr ImU32 kRowAlt = IM_COL32(255, 255, 255, 10);
constexpr ImU32 kHistBar = IM_COL32(90, 170, 255, 220);
constexpr ImU32 kCurrent = IM_COL32(255, 196, 40, 255);

bool any_non_finite(const debug::PausedState& s) {
  for (const auto& g : s.grad_outputs) if (g.has_non_finite()) return true;
  for (const auto& g : s.grad_inputs) if (g.has_non_finite()) return true;
  return false;
}

void draw_histogram(ImDrawList* list, const debug::Histogram& h, ImVec2 a, ImVec2 b, float scale) {
  list->AddRectFilled(a, b, IM_COL32(20, 22, 26, 255), 2 * scale);
  if (h.counts.empty()) return;
  const int64_t peak = *std::max_element(h.counts.begin(), h.counts.end());
  if (peak <= 0) return;
  const float w = (b.x - a.x - 2 * scale) / float(h.counts.size());
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if (h.counts[i] == 0) continue;
    // sqrt scale: a few outliers stay visible next to a tall bin
    const float f = std::sqrt(float(h.counts[i]) / float(peak));
    const float x0 = a.x + scale + w * float(i);
    list->AddRectFilled({x0, b.y - scale - f * (b.y - a.y - 2 * scale)}, {x0 + std::max(w - scale, scale), b.y - scale}, kHistBar);
  }
}

}  // namespace

std::string format_stat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";
  const double a = std::abs(v);
  if (a >= 1e4 || a < 1e-3) return fmt::format("{:.3e}", v);
  return fmt::format("{:.4g}", v);
}

std::string DebuggerView::label(uint64_t id) const {
  auto it = labels_.find(id);
  return it != labels_.end() ? it->second : fmt::format("node {:#x}", id);
}

void DebuggerView::draw(const DebuggerStatus& status, ImVec2 size, float scale) {
  layout_ = {};
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end(origin.x + size.x, origin.y + size.y);
  list->AddRectFilled(origin, end, palette::kBackground);
  draw_header(status, origin, size.x, scale);
  const float order_w = std::clamp(size.x * 0.26f, 180 * scale, 320 * scale);
  const ImVec2 body_min(origin.x, layout_.header_max.y);
  const ImVec2 table_max(end.x - order_w, end.y);
  if (status.paused) {
    draw_table(*status.paused, body_min, table_max, scale);
  } else {
    const char* text = !status.armed ? "Arm \"Debug backward\", then run the forward pass and loss.backward()."
                       : status.running ? "The backward pass is running; it pauses at the next breakpoint (or press Pause)."
                                        : "Waiting for a backward pass. Breakpoints fire while it runs.";
    list->AddText({body_min.x + 14 * scale, body_min.y + 14 * scale}, palette::kTextDim, text);
  }
  list->AddLine({table_max.x, body_min.y}, {table_max.x, end.y}, palette::kSeparator, scale);
  draw_order(status, {table_max.x, body_min.y}, end, scale);
  ImGui::SetCursorScreenPos(end);
}

void DebuggerView::draw_header(const DebuggerStatus& status, ImVec2 min, float width, float scale) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const float pad = 10 * scale;
  const int lines = status.paused ? 3 : 1;
  const ImVec2 max(min.x + width, min.y + pad * 2 + line * float(lines) + 4 * scale * float(lines - 1));
  layout_.header_min = min;
  layout_.header_max = max;
  float y = min.y + pad;
  if (!status.paused) {
    list->AddRectFilled(min, max, palette::kPanel);
    std::string text = !status.armed ? "Debugger off" : status.running ? "Running backward" : "Armed";
    if (!status.message.empty()) text += "  ·  " + status.message;
    list->AddText({min.x + pad, y}, status.armed ? palette::kText : palette::kTextDim, text.c_str());
    list->AddLine({min.x, max.y - scale}, {max.x, max.y - scale}, palette::kSeparator, scale);
    return;
  }
  const debug::PausedState& s = *status.paused;
  const bool bad = any_non_finite(s);
  list->AddRectFilled(min, max, bad ? kPausedBadBand : kPausedBand);
  list->AddRectFilled(min, {min.x + 5 * scale, max.y}, bad ? kBad : kCurrent);
  const std::string title = fmt::format("PAUSED {} {}", s.phase == debug::PausePhase::BeforeNode ? "before" : "after", s.node.name);
  list->AddText({min.x + pad + 4 * scale, y}, IM_COL32_WHITE, title.c_str());
  const std::string where = fmt::format("node {} of {}  ·  backward #{}", s.index + 1, s.num_nodes, s.backward);
  const float ww = ImGui::CalcTextSize(where.c_str()).x;
  list->AddText({max.x - ww - pad, y}, palette::kText, where.c_str());
  y += line + 4 * scale;
  std::string detail = fmt::format("forward op: {}    module: {}    sequence: {}", s.node.forward_op.empty() ? "-" : s.node.forward_op,
                                   s.node.module.empty() ? "(top level)" : s.node.module,
                                   s.node.is_leaf ? std::string("leaf") : std::to_string(s.node.sequence_nr));
  list->AddText({min.x + pad + 4 * scale, y}, palette::kText, detail.c_str());
  y += line + 4 * scale;
  const std::string why = s.reason == debug::PauseReason::Breakpoint && !s.description.empty()
                              ? "why: " + s.description
                              : fmt::format("why: {}{}", debug::reason_name(s.reason), s.description.empty() ? std::string() : " - " + s.description);
  list->AddText({min.x + pad + 4 * scale, y}, bad ? IM_COL32(255, 190, 180, 255) : IM_COL32(255, 226, 150, 255), why.c_str());
}

float DebuggerView::draw_table(const debug::PausedState& s, ImVec2 min, ImVec2 max, float scale) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const float pad = 10 * scale;
  const char* headers[] = {"gradient", "shape", "dtype", "norm", "min", "max", "mean", "NaN", "Inf", "histogram"};
  constexpr int kCols = 10;
  struct Cell {
    std::string text;
    ImU32 color;
  };
  struct RowData {
    bool produced;
    size_t index;
    const debug::GradientStats* g;
    std::vector<Cell> cells;
  };
  std::vector<RowData> rows;
  auto add = [&](bool produced, const std::vector<debug::GradientStats>& gs) {
    for (size_t i = 0; i < gs.size(); ++i) {
      const auto& g = gs[i];
      RowData r{produced, i, &g, {}};
      r.cells.push_back({fmt::format("{}[{}]", produced ? "grad_inputs" : "grad_outputs", i), palette::kText});
      if (!g.defined) {
        r.cells.push_back({"undefined", palette::kTextDim});
        for (int c = 2; c < kCols - 1; ++c) r.cells.push_back({"", palette::kTextDim});
      } else {
        r.cells.push_back({format_shape(g.shape), palette::kText});
        r.cells.push_back({std::string(dtype_name(g.dtype)), palette::kTextDim});
        r.cells.push_back({format_stat(g.norm), std::isfinite(g.norm) ? palette::kText : kBad});
        r.cells.push_back({format_stat(g.min), palette::kText});
        r.cells.push_back({format_stat(g.max), palette::kText});
        r.cells.push_back({format_stat(g.mean), palette::kText});
        r.cells.push_back({std::to_string(g.nan_count), g.nan_count ? kBad : palette::kTextDim});
        r.cells.push_back({std::to_string(g.inf_count), g.inf_count ? kBad : palette::kTextDim});
      }
      rows.push_back(std::move(r));
    }
  };
  add(false, s.grad_outputs);
  add(true, s.grad_inputs);

  float widths[kCols];
  for (int c = 0; c < kCols; ++c) widths[c] = ImGui::CalcTextSize(headers[c]).x;
  for (const auto& r : rows)
    for (int c = 0; c < kCols - 1; ++c) widths[c] = std::max(widths[c], ImGui::CalcTextSize(r.cells[size_t(c)].text.c_str()).x);
  const float gap = 16 * scale;
  float used = pad;
  for (int c = 0; c < kCols - 1; ++c) used += widths[c] + gap;
  const float range_w = ImGui::CalcTextSize("-0.000e+00 .. -0.000e+00").x + gap;
  // The histogram gets 120..220 px; the value range beside it only when there is room for both.
  const float avail = max.x - min.x - used - pad;
  const bool show_range = avail - range_w >= 120 * scale;
  widths[kCols - 1] = std::max(60 * scale, std::min(220 * scale, show_range ? avail - range_w : avail));

  const float row_h = line * 2 + 6 * scale;
  float y = min.y + pad * 0.6f;
  float x = min.x + pad;
  // column headers
  for (int c = 0; c < kCols; ++c) {
    const bool numeric = c >= 3 && c <= 8;
    const float tw = ImGui::CalcTextSize(headers[c]).x;
    list->AddText({numeric ? x + widths[c] - tw : x, y}, palette::kTextDim, headers[c]);
    x += widths[c] + gap;
  }
  y += line + 4 * scale;
  list->AddLine({min.x + pad, y}, {max.x - pad, y}, palette::kSeparator, scale);
  y += 2 * scale;

  bool section_produced = false;
  bool first = true;
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const RowData& r = rows[ri];
    if (first || r.produced != section_produced) {
      const char* title = r.produced ? "produced (sent to the inputs)" : "received (from the outputs)";
      list->AddText({min.x + pad, y + 2 * scale}, palette::kAccent, title);
      y += line + 6 * scale;
      section_produced = r.produced;
      first = false;
    }
    if (y + row_h > max.y) break;
    const ImVec2 rmin(min.x + pad * 0.5f, y), rmax(max.x - pad * 0.5f, y + row_h);
    const bool bad = r.g->defined && r.g->has_non_finite();
    if (bad) list->AddRectFilled(rmin, rmax, kBadRow, 3 * scale);
    else if (ri % 2) list->AddRectFilled(rmin, rmax, kRowAlt, 3 * scale);
    DebuggerViewLayout::Row lr;
    lr.produced = r.produced;
    lr.index = r.index;
    lr.min = rmin;
    lr.max = rmax;
    x = min.x + pad;
    const float ty = y + (row_h - line) / 2;
    for (int c = 0; c < kCols - 1; ++c) {
      const bool numeric = c >= 3;
      const std::string& t = r.cells[size_t(c)].text;
      const float tw = ImGui::CalcTextSize(t.c_str()).x;
      list->AddText({numeric ? x + widths[c] - tw : x, ty}, r.cells[size_t(c)].color, t.c_str());
      if (c == 7) {
        lr.nan_min = {x + widths[c] - tw, ty};
        lr.nan_max = {x + widths[c], ty + line};
      }
      x += widths[c] + gap;
    }
    lr.hist_min = {x, y + 4 * scale};
    lr.hist_max = {x + widths[kCols - 1], y + row_h - 4 * scale};
    if (r.g->defined) {
      draw_histogram(list, r.g->histogram, lr.hist_min, lr.hist_max, scale);
      if (show_range && r.g->finite_count() > 0) {
        const std::string range = format_stat(r.g->histogram.lo) + " .. " + format_stat(r.g->histogram.hi);
        list->AddText({lr.hist_max.x + gap * 0.6f, ty}, palette::kTextDim, range.c_str());
      }
      if (ImGui::IsMouseHoveringRect(lr.hist_min, lr.hist_max) && !r.g->histogram.counts.empty()) {
        const auto& h = r.g->histogram;
        const float f = (ImGui::GetIO().MousePos.x - lr.hist_min.x) / (lr.hist_max.x - lr.hist_min.x);
        const size_t bin = std::min(h.counts.size() - 1, size_t(std::max(0.0f, f) * float(h.counts.size())));
        ImGui::SetTooltip("[%s, %s): %lld values", format_stat(h.bin_lo(bin)).c_str(), format_stat(h.bin_hi(bin)).c_str(),
                          (long long)h.counts[bin]);
      }
    }
    layout_.rows.push_back(lr);
    y += row_h + 2 * scale;
  }
  if (rows.empty()) list->AddText({min.x + pad, y}, palette::kTextDim, "this node has no gradients");
  if (s.phase == debug::PausePhase::BeforeNode) {
    y += 6 * scale;
    if (y + line < max.y)
      list->AddText({min.x + pad, y}, palette::kTextDim, "Produced gradients appear after the node runs (Step, F11).");
  }
  return y;
}

void DebuggerView::draw_order(const DebuggerStatus& status, ImVec2 min, ImVec2 max, float scale) {
  const std::vector<uint64_t>& order = status.paused ? status.paused->order : status.order;
  layout_.order_min = min;
  layout_.order_max = max;
  layout_.order_entries = order.size();
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  const float pad = 10 * scale;
  list->AddRectFilled(min, max, palette::kPanelAlt);
  const std::string title = fmt::format("execution order ({})", order.size());
  list->AddText({min.x + pad, min.y + pad * 0.6f}, palette::kTextDim, title.c_str());
  const float top = min.y + pad * 0.6f + line + 6 * scale;
  ImGui::SetCursorScreenPos({min.x, top});
  ImGui::BeginChild("##execution_order", {max.x - min.x, max.y - top}, false);
  ImDrawList* child = ImGui::GetWindowDrawList();
  const float row_h = line + 4 * scale;
  for (size_t i = 0; i < order.size(); ++i) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const bool current = status.paused && i + 1 == order.size();
    const bool selected = selected_ && *selected_ == order[i];
    ImGui::PushID(int(i));
    if (ImGui::InvisibleButton("##entry", {std::max(1.0f, max.x - min.x - pad), row_h})) {
      selected_ = order[i];
      clicked_ = order[i];
    }
    const bool hovered = ImGui::IsItemHovered();
    ImGui::PopID();
    if (current) child->AddRectFilled(p, {max.x, p.y + row_h}, IM_COL32(92, 70, 16, 255));
    else if (selected) child->AddRectFilled(p, {max.x, p.y + row_h}, IM_COL32(40, 70, 110, 255));
    else if (hovered) child->AddRectFilled(p, {max.x, p.y + row_h}, IM_COL32(255, 255, 255, 18));
    const std::string num = fmt::format("{:>3}", i + 1);
    child->AddText({p.x + pad, p.y + 2 * scale}, palette::kTextDim, num.c_str());
    const float nx = p.x + pad + ImGui::CalcTextSize("0000").x;
    text_in_box(child, ImGui::GetFontSize(), {nx, p.y + 2 * scale}, {max.x - pad, p.y + row_h}, label(order[i]),
                current ? kCurrent : palette::kText);
  }
  if (status.paused && !order.empty() && ImGui::GetScrollMaxY() > 0) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

}  // namespace rt::viz::draw
