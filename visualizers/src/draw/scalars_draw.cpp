#include "rt/viz/draw/scalars_draw.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {

namespace {

ImU32 with_alpha(ImU32 c, int alpha) { return (c & ~IM_COL32_A_MASK) | (ImU32(alpha) << IM_COL32_A_SHIFT); }

}  // namespace

ScalarsDraw::ScalarsDraw(std::vector<std::shared_ptr<const prof::SessionData>> sessions) : data_(std::move(sessions)) {
  for (const auto& d : data_) {
    if (!d) throw rt::ValueError("ScalarsDraw: a session's data is null");
    sets_.emplace_back(*d);
  }
  set_names_and_axis();
}

void ScalarsDraw::set_names_and_axis() {
  std::set<std::string> names;
  for (const ScalarSet& set : sets_)
    for (const ScalarSeries& s : set.series()) names.insert(s.name);
  names_.assign(names.begin(), names.end());
  // Without step markers every sample falls in step 0, a vertical line: plot against time instead (the combo
  // still offers steps).
  if (!axis_chosen_)
    axis_ = std::all_of(data_.begin(), data_.end(), [](const auto& d) { return d->steps.size() < 2; })
                ? OverlayAxis::RelativeTime
                : OverlayAxis::Step;
}

void ScalarsDraw::append(size_t session, const prof::SessionGrowth& growth) {
  if (session >= sets_.size())
    throw rt::IndexError(fmt::format("ScalarsDraw::append: no session {} (the view shows {})", session, sets_.size()));
  sets_[session].append(*data_[session], growth);
  set_names_and_axis();
}

void ScalarsDraw::set_smoothing(double weight) {
  smoothing_ = std::isfinite(weight) ? std::clamp(weight, 0.0, 0.999) : 0.0;
}

void ScalarsDraw::draw_toolbar(float scale) {
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, {6 * scale, 3 * scale});
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Smoothing");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(160 * scale);
  float w = float(smoothing_);
  if (ImGui::SliderFloat("##smoothing", &w, 0.0f, 0.999f, "%.3f")) set_smoothing(w);
  ImGui::SameLine(0, 18 * scale);
  ImGui::TextUnformatted("X axis");
  ImGui::SameLine();
  int axis = axis_ == OverlayAxis::Step ? 0 : 1;
  ImGui::SetNextItemWidth(130 * scale);
  if (ImGui::Combo("##axis", &axis, "Step\0Relative time\0"))
    set_axis(axis == 0 ? OverlayAxis::Step : OverlayAxis::RelativeTime);
  for (size_t i = 0; i < sets_.size(); ++i) {
    ImGui::SameLine(0, 18 * scale);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float font = ImGui::GetFontSize();
    const float y = p.y + ImGui::GetStyle().FramePadding.y;
    ImGui::GetWindowDrawList()->AddRectFilled({p.x, y + font * 0.35f}, {p.x + font, y + font * 0.65f}, series_color(i));
    ImGui::Dummy({font + 4 * scale, font});
    ImGui::SameLine();
    const std::string label = sets_[i].session_name().empty() ? fmt::format("session {}", i) : sets_[i].session_name();
    ImGui::TextUnformatted(label.c_str());
  }
  ImGui::PopStyleVar();
}

void ScalarsDraw::draw(ImVec2 size, float scale) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end{origin.x + size.x, origin.y + size.y};
  list->AddRectFilled(origin, end, palette::kBackground);
  layout_ = {};
  if (names_.empty()) {
    const char* text = "This session recorded no scalars (log them with rt.profiler.counter('loss', loss) in Python or Session::counter in C++)";
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText({origin.x + std::max(0.0f, (size.x - ts.x) * 0.5f), origin.y + (size.y - ts.y) * 0.5f},
                  palette::kTextDim, text);
    ImGui::Dummy(size);
    return;
  }
  ImGui::SetCursorScreenPos({origin.x + 8 * scale, origin.y + 5 * scale});
  draw_toolbar(scale);
  const float top = origin.y + ImGui::GetFrameHeight() + 12 * scale;
  const ImVec2 area{size.x, end.y - top};
  if (area.x < 60 || area.y < 60) {
    ImGui::SetCursorScreenPos(end);
    return;
  }
  const int cols = std::max(1, int(area.x / (460 * scale)));
  const int rows = (int(names_.size()) + cols - 1) / cols;
  const float chart_w = area.x / float(cols);
  const float chart_h = std::max(190 * scale, std::min(area.y / float(rows), 340 * scale));
  ImGui::SetCursorScreenPos({origin.x, top});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImGui::ColorConvertU32ToFloat4(palette::kBackground));
  ImGui::BeginChild("##charts", area, false);
  ImDrawList* child = ImGui::GetWindowDrawList();
  const ImVec2 base = ImGui::GetCursorScreenPos();
  for (size_t i = 0; i < names_.size(); ++i) {
    const float x = base.x + chart_w * float(i % size_t(cols));
    const float y = base.y + chart_h * float(i / size_t(cols));
    draw_chart(child, names_[i], {x + 6 * scale, y + 4 * scale}, {x + chart_w - 6 * scale, y + chart_h - 6 * scale}, scale);
  }
  ImGui::SetCursorScreenPos(base);
  ImGui::Dummy({area.x, chart_h * float(rows)});
  ImGui::EndChild();
  ImGui::PopStyleColor();
  ImGui::PopStyleVar();
  ImGui::SetCursorScreenPos(end);
}

void ScalarsDraw::draw_chart(ImDrawList* list, const std::string& name, ImVec2 min, ImVec2 max, float scale) {
  const float font = ImGui::GetFontSize();
  list->AddRectFilled(min, max, palette::kPanel, 4 * scale);
  list->AddText({min.x + 10 * scale, min.y + 6 * scale}, palette::kText, name.c_str());
  const ImVec2 pmin{min.x + 64 * scale, min.y + font + 14 * scale};
  const ImVec2 pmax{max.x - 14 * scale, max.y - font - 12 * scale};
  if (pmax.x - pmin.x < 20 || pmax.y - pmin.y < 20) return;

  std::vector<const ScalarSet*> sets;
  for (const ScalarSet& s : sets_) sets.push_back(&s);
  const auto raw = overlay(sets, name, axis_, 0.0);
  const auto smoothed = overlay(sets, name, axis_, smoothing_);
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const OverlayLine& l : raw) {
    if (l.x.empty()) continue;
    x0 = std::min(x0, double(l.x.front()));
    x1 = std::max(x1, double(l.x.back()));
    for (double v : l.y)
      if (std::isfinite(v)) y0 = std::min(y0, v), y1 = std::max(y1, v);
  }
  if (!(x1 >= x0) || !(y1 >= y0)) {
    list->AddText({pmin.x, pmin.y}, palette::kTextDim, "no samples on this axis");
    return;
  }
  if (x1 == x0) x0 -= 1, x1 += 1;
  const double pad = y1 > y0 ? (y1 - y0) * 0.06 : std::max(1e-9, std::fabs(y0) * 0.1 + 1e-9);
  y0 -= pad;
  y1 += pad;
  layout_.charts.push_back({name, pmin, pmax, x0, x1, y0, y1});
  const float w = pmax.x - pmin.x, h = pmax.y - pmin.y;
  auto px = [&](double x) { return pmin.x + float((x - x0) / (x1 - x0)) * w; };
  auto py = [&](double y) { return pmax.y - float((y - y0) / (y1 - y0)) * h; };

  for (const Tick& t : value_ticks(y0, y1, h, 34 * scale)) {
    const float y = py(t.value);
    list->AddLine({pmin.x, y}, {pmax.x, y}, palette::kGrid, scale);
    const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
    list->AddText({pmin.x - tw - 8 * scale, y - font * 0.5f}, palette::kTextDim, t.label.c_str());
  }
  const auto x_ticks = axis_ == OverlayAxis::Step ? value_ticks(x0, x1, w, 80 * scale)
                                                  : time_ticks(int64_t(x0), int64_t(x1), w, 100 * scale);
  for (const Tick& t : x_ticks) {
    if (axis_ == OverlayAxis::Step && t.value != std::floor(t.value)) continue;
    const float x = px(t.value);
    list->AddLine({x, pmax.y}, {x, pmax.y + 4 * scale}, palette::kTextDim, scale);
    const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
    list->AddText({std::clamp(x - tw * 0.5f, pmin.x - 10 * scale, pmax.x - tw + 10 * scale), pmax.y + 5 * scale},
                  palette::kTextDim, t.label.c_str());
  }
  list->AddRect(pmin, pmax, palette::kSeparator);

  auto plot = [&](const OverlayLine& l, ImU32 color, float thickness) {
    std::vector<ImVec2> points;
    if (double(l.x.size()) > 2.0 * w) {
      downsample(l.x, l.y, int64_t(std::floor(x0)), int64_t(std::ceil(x1)), w, columns_);
      for (const ScalarColumn& c : columns_) {
        if (c.count == 0 || !std::isfinite(c.min)) continue;
        const float x = pmin.x + float(c.pixel) + 0.5f;
        if (c.max > c.min) list->AddLine({x, py(c.min)}, {x, py(c.max)}, color, scale);
        points.push_back({x, py(c.first)});
        if (c.last != c.first) points.push_back({x, py(c.last)});
      }
    } else {
      for (size_t i = 0; i < l.x.size(); ++i)
        if (std::isfinite(l.y[i])) points.push_back({px(double(l.x[i])), py(l.y[i])});
    }
    if (points.size() >= 2) list->AddPolyline(points.data(), int(points.size()), color, 0, thickness);
    else if (points.size() == 1) list->AddCircleFilled(points[0], 3 * scale, color);
  };
  list->PushClipRect(pmin, pmax, true);
  if (smoothing_ > 0)
    for (const OverlayLine& l : raw) plot(l, with_alpha(series_color(l.session), 80), 1.2f * scale);
  for (const OverlayLine& l : smoothed) plot(l, series_color(l.session), 2.0f * scale);
  list->PopClipRect();

  if (ImGui::IsMouseHoveringRect(pmin, pmax) && ImGui::IsWindowHovered()) {
    const double x = x0 + double(ImGui::GetIO().MousePos.x - pmin.x) / w * (x1 - x0);
    list->AddLine({ImGui::GetIO().MousePos.x, pmin.y}, {ImGui::GetIO().MousePos.x, pmax.y}, palette::kCursor, scale);
    ImGui::BeginTooltip();
    ImGui::Text("%s at %s", name.c_str(),
                axis_ == OverlayAxis::Step ? fmt::format("step {:.0f}", x).c_str() : format_duration(int64_t(x)).c_str());
    for (size_t k = 0; k < smoothed.size(); ++k) {
      const OverlayLine& l = smoothed[k];
      if (l.x.empty()) continue;
      const auto it = std::lower_bound(l.x.begin(), l.x.end(), int64_t(std::llround(x)));
      size_t i = size_t(std::min<ptrdiff_t>(it - l.x.begin(), ptrdiff_t(l.x.size()) - 1));
      if (i > 0 && std::fabs(double(l.x[i - 1]) - x) < std::fabs(double(l.x[i]) - x)) --i;
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series_color(l.session)), "%s: %s (raw %s)", l.label.c_str(),
                         format_value(l.y[i]).c_str(), format_value(raw[k].y[i]).c_str());
    }
    ImGui::EndTooltip();
  }
}

}  // namespace rt::viz::draw
