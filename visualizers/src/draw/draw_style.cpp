#include "rt/viz/draw/draw_style.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/viz/memory_timeline_blocks.h"

namespace rt::viz::draw {

namespace {

uint32_t fnv1a(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

ImU32 hsv(float h, float s, float v) {
  float r, g, b;
  ImGui::ColorConvertHSVtoRGB(h, s, v, r, g, b);
  return IM_COL32(int(r * 255), int(g * 255), int(b * 255), 255);
}

// The 1/2/5 x 10^k step whose spacing over `px_per_unit` is at least min_px.
double nice_step(double span, double pixels, double min_px) {
  const double raw = span * min_px / std::max(pixels, 1.0);
  if (!(raw > 0)) return 1;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

int decimals_for(double step) { return std::max(0, int(-std::floor(std::log10(step) + 1e-9))); }

}  // namespace

ImU32 event_color(EventHue hue, std::string_view name) {
  const uint32_t h = fnv1a(name);
  const float jitter = float(h % 1000) / 1000.0f;
  const float shade = float((h >> 10) % 100) / 100.0f;
  switch (hue) {
    case EventHue::Op: {
      // Forward ops: warm and cool hues, bright; avoid the purple band used by backward nodes.
      const float hh = std::fmod(0.02f + jitter * 0.62f, 1.0f);
      return hsv(hh, 0.45f + 0.15f * shade, 0.78f + 0.1f * shade);
    }
    case EventHue::BackwardNode: return hsv(0.70f + jitter * 0.14f, 0.40f + 0.15f * shade, 0.50f + 0.1f * shade);
    case EventHue::UserRange: return hsv(0.50f, 0.20f, 0.52f + 0.12f * shade);
    case EventHue::Kernel: return hsv(0.28f + jitter * 0.12f, 0.55f, 0.70f + 0.1f * shade);
    case EventHue::Memcpy: return hsv(0.13f, 0.65f, 0.85f);
    case EventHue::Memset: return hsv(0.07f, 0.65f, 0.85f);
    case EventHue::CudaApi: return hsv(0.58f, 0.22f, 0.55f + 0.1f * shade);
    case EventHue::Step: return hsv(0.58f, 0.30f, 0.40f + 0.1f * shade);
    // Communication: one orange band, a shade per op, so all-reduces and broadcasts read apart.
    case EventHue::Collective: return hsv(0.08f + jitter * 0.04f, 0.70f, 0.80f + 0.1f * shade);
  }
  return palette::kFolded;
}

ImU32 text_color_on(ImU32 background) {
  const float r = float((background >> IM_COL32_R_SHIFT) & 0xFF), g = float((background >> IM_COL32_G_SHIFT) & 0xFF),
              b = float((background >> IM_COL32_B_SHIFT) & 0xFF);
  return 0.299f * r + 0.587f * g + 0.114f * b > 150 ? palette::kTextDark : palette::kText;
}

ImU32 series_color(size_t i) {
  static constexpr ImU32 kSeries[] = {IM_COL32(90, 170, 255, 255),  IM_COL32(255, 150, 60, 255),
                                      IM_COL32(110, 210, 120, 255), IM_COL32(235, 95, 110, 255),
                                      IM_COL32(190, 140, 250, 255), IM_COL32(240, 210, 90, 255),
                                      IM_COL32(80, 210, 210, 255),  IM_COL32(200, 200, 200, 255)};
  return kSeries[i % std::size(kSeries)];
}

std::string format_duration(int64_t ns) {
  const double a = std::fabs(double(ns));
  if (a < 1e3) return fmt::format("{} ns", ns);
  if (a < 1e6) return fmt::format("{:.{}f} us", ns / 1e3, a < 1e4 ? 2 : a < 1e5 ? 1 : 0);
  if (a < 1e9) return fmt::format("{:.{}f} ms", ns / 1e6, a < 1e7 ? 2 : a < 1e8 ? 1 : 0);
  return fmt::format("{:.2f} s", ns / 1e9);
}

std::string format_value(double v) {
  const double a = std::fabs(v);
  if (v == 0) return "0";
  if (!std::isfinite(v)) return fmt::format("{}", v);
  if (a >= 1e6 || a < 1e-3) return fmt::format("{:.3g}", v);
  if (a >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

std::vector<Tick> time_ticks(int64_t t0_ns, int64_t t1_ns, double width_px, double min_px) {
  std::vector<Tick> out;
  if (t1_ns <= t0_ns || width_px <= 0) return out;
  const double step = std::max(1.0, nice_step(double(t1_ns - t0_ns), width_px, min_px));
  double unit = 1;
  const char* name = "ns";
  if (step >= 1e9) unit = 1e9, name = "s";
  else if (step >= 1e6) unit = 1e6, name = "ms";
  else if (step >= 1e3) unit = 1e3, name = "us";
  const int decimals = decimals_for(step / unit);
  for (double t = std::ceil(double(t0_ns) / step) * step; t <= double(t1_ns); t += step)
    out.push_back({t, fmt::format("{:.{}f} {}", t / unit, decimals, name)});
  return out;
}

std::vector<Tick> value_ticks(double v0, double v1, double height_px, double min_px) {
  std::vector<Tick> out;
  if (!(v1 > v0) || height_px <= 0) return out;
  const double step = nice_step(v1 - v0, height_px, min_px);
  for (double v = std::ceil(v0 / step) * step; v <= v1 + step * 1e-9; v += step)
    out.push_back({std::fabs(v) < step * 1e-9 ? 0.0 : v, format_value(std::fabs(v) < step * 1e-9 ? 0.0 : v)});
  return out;
}

std::vector<Tick> byte_ticks(int64_t max_bytes, double height_px, double min_px) {
  std::vector<Tick> out;
  if (max_bytes <= 0 || height_px <= 0) return out;
  // Steps in powers of two times 1, 2 or 5 of the largest binary unit below the maximum.
  double unit = 1;
  while (unit * 1024 <= double(max_bytes)) unit *= 1024;
  const double step = nice_step(double(max_bytes) / unit, height_px, min_px) * unit;
  for (double v = 0; v <= double(max_bytes); v += step) out.push_back({v, format_bytes(int64_t(v))});
  return out;
}

bool text_in_box(ImDrawList* list, float font_size, ImVec2 min, ImVec2 max, std::string_view text, ImU32 color) {
  ImFont* font = ImGui::GetFont();
  const float avail = max.x - min.x;
  const float y = min.y + std::max(0.0f, (max.y - min.y - font_size) * 0.5f);
  auto width = [&](std::string_view s) { return font->CalcTextSizeA(font_size, FLT_MAX, 0, s.data(), s.data() + s.size()).x; };
  if (width(text) <= avail) {
    list->AddText(font, font_size, {min.x, y}, color, text.data(), text.data() + text.size());
    return true;
  }
  const float dots = width("...");
  size_t lo = 0, hi = text.size();
  while (lo < hi) {  // the longest prefix that fits with the dots
    const size_t mid = (lo + hi + 1) / 2;
    if (width(text.substr(0, mid)) + dots <= avail) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0) return false;
  const std::string cut = std::string(text.substr(0, lo)) + "...";
  list->AddText(font, font_size, {min.x, y}, color, cut.data(), cut.data() + cut.size());
  return true;
}

void hatch(ImDrawList* list, ImVec2 min, ImVec2 max, ImU32 color, float spacing, float thickness) {
  list->PushClipRect(min, max, true);
  const float h = max.y - min.y;
  for (float x = min.x - h; x < max.x; x += spacing) list->AddLine({x, max.y}, {x + h, min.y}, color, thickness);
  list->PopClipRect();
}

void arrow(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float head) {
  list->AddLine(a, b, color, thickness);
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len = std::sqrt(dx * dx + dy * dy);
  if (len < 1e-3f) return;
  const float ux = dx / len, uy = dy / len;
  const ImVec2 base{b.x - ux * head, b.y - uy * head};
  list->AddTriangleFilled(b, {base.x - uy * head * 0.5f, base.y + ux * head * 0.5f},
                          {base.x + uy * head * 0.5f, base.y - ux * head * 0.5f}, color);
}

}  // namespace rt::viz::draw
