#include "rt/viz/draw/grad_norm_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <utility>

#include "rt/viz/draw/debugger_view.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {
namespace {

void dashed_hline(ImDrawList* list, float x0, float x1, float y, ImU32 color, float scale) {
  for (float x = x0; x < x1; x += 10 * scale) list->AddLine({x, y}, {std::min(x + 5 * scale, x1), y}, color, scale);
}

}  // namespace

void GradNormChart::draw(const debug::GradNormHistory& history, ImVec2 size, float scale) {
  layout_ = {};
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end(origin.x + size.x, origin.y + size.y);
  list->AddRectFilled(origin, end, palette::kBackground);
  const float line = ImGui::GetTextLineHeight();
  const float pad = 10 * scale;
  const auto& steps = history.steps();
  layout_.steps = int64_t(steps.size());

  // names in order of first appearance, with their last step's flags
  std::vector<std::string> names;
  std::unordered_map<std::string, size_t> index;
  for (const auto& st : steps)
    for (const auto& p : st.params)
      if (index.emplace(p.name, names.size()).second) names.push_back(p.name);

  list->AddText({origin.x + pad, origin.y + pad * 0.6f}, palette::kText, "Gradient norm per parameter (log scale)");
  if (steps.empty()) {
    const char* text = "No steps yet: arm the debugger and run backward passes; each one adds a step.";
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText({(origin.x + end.x - ts.x) / 2, (origin.y + end.y - ts.y) / 2}, palette::kTextDim, text);
    ImGui::SetCursorScreenPos(end);
    return;
  }

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool any_non_finite = false;
  for (const auto& st : steps)
    for (const auto& p : st.params) {
      if (!p.has_grad) continue;
      if (!std::isfinite(p.norm)) any_non_finite = true;
      else if (p.norm > 0) lo = std::min(lo, p.norm), hi = std::max(hi, p.norm);
    }
  const auto& opt = history.options();
  if (!std::isfinite(lo)) lo = 1e-3, hi = 1;
  lo = std::min(lo, opt.vanishing_below);
  hi = std::max(hi, opt.exploding_above);
  double llo = std::floor(std::log10(lo)), lhi = std::ceil(std::log10(hi));
  if (lhi <= llo) lhi = llo + 1;
  layout_.log_lo = llo;
  layout_.log_hi = lhi;

  // legend on the right
  float legend_w = ImGui::CalcTextSize("EXPLODING").x + 40 * scale;
  for (const auto& n : names) legend_w = std::max(legend_w, ImGui::CalcTextSize(n.c_str()).x + 30 * scale);
  legend_w = std::min(legend_w + ImGui::CalcTextSize("0.000e+00").x + 20 * scale, size.x * 0.45f);
  const float axis_w = ImGui::CalcTextSize("1e-10").x + 12 * scale;
  const ImVec2 pmin(origin.x + pad + axis_w, origin.y + pad + line + 8 * scale);
  const ImVec2 pmax(end.x - legend_w - 2 * pad, end.y - pad - line - 6 * scale);
  layout_.plot_min = pmin;
  layout_.plot_max = pmax;
  if (pmax.x - pmin.x < 20 || pmax.y - pmin.y < 20) {
    ImGui::SetCursorScreenPos(end);
    return;
  }
  list->AddRectFilled(pmin, pmax, palette::kPanel);
  const int64_t n_steps = int64_t(steps.size());
  const float inset = 10 * scale;  // markers at the first and last step stay inside the plot
  auto x_of = [&](int64_t s) {
    return n_steps <= 1 ? (pmin.x + pmax.x) / 2 : pmin.x + inset + (pmax.x - pmin.x - 2 * inset) * float(s) / float(n_steps - 1);
  };
  auto y_of = [&](double norm) { return pmax.y - (pmax.y - pmin.y) * float((std::log10(norm) - llo) / (lhi - llo)); };

  // y ticks at powers of ten (every k-th when crowded)
  const int decades = int(lhi - llo);
  const int every = std::max(1, int(std::ceil(decades * (line + 6 * scale) / (pmax.y - pmin.y))));
  for (int d = int(llo); d <= int(lhi); d += every) {
    const float y = y_of(std::pow(10.0, d));
    list->AddLine({pmin.x, y}, {pmax.x, y}, palette::kGrid, scale);
    const std::string t = fmt::format("1e{}", d);
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    list->AddText({pmin.x - tw - 6 * scale, y - line / 2}, palette::kTextDim, t.c_str());
  }
  // x ticks (steps)
  for (const Tick& t : value_ticks(0, double(std::max<int64_t>(n_steps - 1, 1)), pmax.x - pmin.x, 70 * scale)) {
    // Whole steps only; ticks at k * 0.2 carry rounding error (2.0000000000000004), so compare rounded.
    const double step = std::round(t.value);
    if (std::abs(t.value - step) > 1e-6 || step > double(n_steps - 1)) continue;
    const float x = x_of(int64_t(step));
    list->AddLine({x, pmax.y}, {x, pmax.y + 4 * scale}, palette::kTextDim, scale);
    const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
    list->AddText({x - tw / 2, pmax.y + 5 * scale}, palette::kTextDim, t.label.c_str());
  }
  list->AddText({pmax.x + 8 * scale, pmax.y + 5 * scale}, palette::kTextDim, "step");
  // thresholds
  list->PushClipRect(pmin, pmax, true);
  dashed_hline(list, pmin.x, pmax.x, y_of(opt.exploding_above), IM_COL32(255, 80, 70, 150), scale);
  dashed_hline(list, pmin.x, pmax.x, y_of(opt.vanishing_below), IM_COL32(80, 160, 255, 150), scale);

  // lines and flags
  for (size_t k = 0; k < names.size(); ++k) {
    const ImU32 color = series_color(k);
    ImVec2 prev;
    bool have_prev = false;
    for (int64_t s = 0; s < n_steps; ++s) {
      const debug::ParameterGradNorm* p = nullptr;
      for (const auto& q : steps[size_t(s)].params)
        if (q.name == names[k]) p = &q;
      if (!p || !p->has_grad || !(p->norm > 0) || !std::isfinite(p->norm)) {
        if (p && p->has_grad && !std::isfinite(p->norm)) {
          const float x = x_of(s);
          list->AddTriangleFilled({x - 5 * scale, pmin.y + 1}, {x + 5 * scale, pmin.y + 1}, {x, pmin.y + 9 * scale}, kExplodingColor);
        }
        have_prev = false;
        continue;
      }
      const ImVec2 pt(x_of(s), y_of(p->norm));
      if (have_prev) list->AddLine(prev, pt, color, 1.8f * scale);
      list->AddCircleFilled(pt, 2.2f * scale, color);
      if (p->exploding) list->AddCircle(pt, 5.5f * scale, kExplodingColor, 0, 2 * scale);
      if (p->vanishing) list->AddCircle(pt, 5.5f * scale, kVanishingColor, 0, 2 * scale);
      prev = pt;
      have_prev = true;
    }
  }
  list->PopClipRect();
  list->AddRect(pmin, pmax, palette::kSeparator, 0, 0, scale);
  if (any_non_finite) list->AddText({pmin.x + 6 * scale, pmin.y + 4 * scale}, kExplodingColor, "non-finite norms marked at the top");

  // hover: values at the nearest step
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && m.x >= pmin.x && m.x <= pmax.x && m.y >= pmin.y && m.y <= pmax.y) {
    const int64_t s = n_steps <= 1 ? 0
                                   : std::clamp<int64_t>(int64_t(std::lround((m.x - pmin.x - inset) / (pmax.x - pmin.x - 2 * inset) *
                                                                             float(n_steps - 1))),
                                                         0, n_steps - 1);
    list->AddLine({x_of(s), pmin.y}, {x_of(s), pmax.y}, palette::kCursor, scale);
    ImGui::BeginTooltip();
    ImGui::Text("step %lld", (long long)steps[size_t(s)].step);
    for (const auto& p : steps[size_t(s)].params) {
      const ImU32 c = series_color(index[p.name]);
      ImGui::TextColored(ImColor(c), "%s", p.name.c_str());
      ImGui::SameLine();
      ImGui::Text("%s%s", p.has_grad ? format_stat(p.norm).c_str() : "no grad", p.exploding ? "  exploding" : p.vanishing ? "  vanishing" : "");
    }
    ImGui::EndTooltip();
  }

  // legend: flagged first
  const auto& last = steps.back();
  std::vector<GradNormChartLayout::Entry> entries;
  for (size_t k = 0; k < names.size(); ++k) {
    GradNormChartLayout::Entry e;
    e.name = names[k];
    e.color = series_color(k);
    for (const auto& p : last.params)
      if (p.name == names[k]) e.vanishing = p.vanishing, e.exploding = p.exploding;
    entries.push_back(e);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return (a.exploding || a.vanishing) > (b.exploding || b.vanishing);
  });
  float ly = pmin.y;
  const float lx = pmax.x + 2 * pad;
  list->AddText({lx, origin.y + pad * 0.6f}, palette::kTextDim, fmt::format("{} parameters, {} steps", names.size(), n_steps).c_str());
  for (auto& e : entries) {
    if (ly + line > end.y - pad) break;
    e.min = {lx, ly};
    e.max = {end.x - pad, ly + line + 4 * scale};
    if (e.exploding || e.vanishing)
      list->AddRectFilled(e.min, e.max, e.exploding ? IM_COL32(110, 30, 30, 160) : IM_COL32(30, 60, 110, 160), 3 * scale);
    list->AddRectFilled({lx + 4 * scale, ly + line / 2 - 1.5f * scale}, {lx + 18 * scale, ly + line / 2 + 1.5f * scale + 1}, e.color);
    float x = lx + 24 * scale;
    const float right = end.x - pad - 4 * scale;
    std::string flag = e.exploding ? "EXPLODING" : e.vanishing ? "VANISHING" : "";
    double norm = std::numeric_limits<double>::quiet_NaN();
    for (const auto& p : last.params)
      if (p.name == e.name) norm = p.norm;
    const std::string value = flag.empty() ? format_stat(norm) : flag;
    const float vw = ImGui::CalcTextSize(value.c_str()).x;
    text_in_box(list, ImGui::GetFontSize(), {x, ly + 2 * scale}, {right - vw - 8 * scale, ly + line + 2 * scale}, e.name, palette::kText);
    list->AddText({right - vw, ly + 2 * scale}, e.exploding ? kExplodingColor : e.vanishing ? kVanishingColor : palette::kTextDim,
                  value.c_str());
    ly += line + 6 * scale;
  }
  // what the guides and rings mean
  ly += 6 * scale;
  struct Key {
    std::string text;
    ImU32 color;
    bool marker;
  };
  const Key keys[] = {{fmt::format("exploding > {:g}", opt.exploding_above), kExplodingColor, true},
                      {fmt::format("or > {:g}x its median", opt.exploding_ratio), kExplodingColor, false},
                      {fmt::format("vanishing < {:g}", opt.vanishing_below), kVanishingColor, true}};
  for (const auto& [text, color, marker] : keys) {
    if (ly + line > end.y - pad) break;
    if (marker) {
      dashed_hline(list, lx + 4 * scale, lx + 18 * scale, ly + line / 2, color, scale);
      list->AddCircle({lx + 11 * scale, ly + line / 2}, 4.5f * scale, color, 0, 1.5f * scale);
    }
    text_in_box(list, ImGui::GetFontSize(), {lx + 24 * scale, ly + 2 * scale}, {end.x - pad, ly + line + 2 * scale}, text, palette::kTextDim);
    ly += line + 4 * scale;
  }
  layout_.legend = std::move(entries);
  ImGui::SetCursorScreenPos(end);
}

}  // namespace rt::viz::draw
