// rt/viz/draw/draw_style.h — the look shared by the ImGui views of a session (timeline, memory,
// scalars): palette, event colors, time and value axis ticks, and text that fits a box.
//
//   ImU32 c = rt::viz::draw::event_color(rt::viz::draw::EventHue::Op, "addmm");   // stable per name
//   for (const rt::viz::draw::Tick& t : rt::viz::draw::time_ticks(view.t0() - origin, view.t1() - origin, 1200, 90))
//     draw_tick(view.x_of(t.value + origin), t.label);                             // "1.5 ms"
//   rt::viz::draw::text_in_box(list, font_size, {x0, y0}, {x1, y1}, name, IM_COL32_WHITE);
//
// Contracts
// - event_color is a pure function of (hue family, name): the same op has the same color in every view
//   and every run. Backward nodes use a darker, desaturated family, so they never look like forward ops.
// - time_ticks: ticks at multiples of a 1/2/5 x 10^k ns step chosen so that labels are at least min_px
//   apart over width_px pixels; labels use one unit for all ticks (ns, us, ms or s) with the decimals the
//   step needs. value_ticks does the same for plain numbers; byte_ticks for byte counts (format_bytes).
// - text_in_box draws nothing when not even one character and "..." fit; else the longest prefix of the
//   text that fits, followed by "..." when cut. Returns whether anything was drawn.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rt::viz::draw {

namespace palette {
inline constexpr ImU32 kBackground = IM_COL32(24, 26, 30, 255);
inline constexpr ImU32 kPanel = IM_COL32(34, 37, 43, 255);
inline constexpr ImU32 kPanelAlt = IM_COL32(30, 33, 38, 255);
inline constexpr ImU32 kGrid = IM_COL32(255, 255, 255, 22);
inline constexpr ImU32 kSeparator = IM_COL32(70, 74, 82, 255);
inline constexpr ImU32 kText = IM_COL32(222, 225, 230, 255);
inline constexpr ImU32 kTextDim = IM_COL32(150, 155, 165, 255);
inline constexpr ImU32 kTextDark = IM_COL32(16, 18, 20, 255);
inline constexpr ImU32 kAccent = IM_COL32(90, 170, 255, 255);
inline constexpr ImU32 kSelection = IM_COL32(255, 255, 255, 255);
inline constexpr ImU32 kRange = IM_COL32(90, 170, 255, 50);
inline constexpr ImU32 kWarning = IM_COL32(120, 90, 20, 255);
inline constexpr ImU32 kPeak = IM_COL32(235, 64, 52, 255);
inline constexpr ImU32 kCursor = IM_COL32(255, 210, 80, 200);
inline constexpr ImU32 kFolded = IM_COL32(96, 100, 108, 255);
inline constexpr ImU32 kFoldedHatch = IM_COL32(140, 145, 155, 255);
inline constexpr ImU32 kLaunchFlow = IM_COL32(250, 200, 60, 255);
inline constexpr ImU32 kBackwardFlow = IM_COL32(230, 110, 230, 255);
}  // namespace palette

enum class EventHue : uint8_t { Op, BackwardNode, UserRange, Kernel, Memcpy, Memset, CudaApi, Step, Collective };

ImU32 event_color(EventHue hue, std::string_view name);
// Dark or light text, whichever reads better on `background`.
ImU32 text_color_on(ImU32 background);
// A series color for index i of n distinct lines (sessions in an overlay, categories).
ImU32 series_color(size_t i);

struct Tick {
  double value = 0;
  std::string label;
};

std::vector<Tick> time_ticks(int64_t t0_ns, int64_t t1_ns, double width_px, double min_px);
std::vector<Tick> value_ticks(double v0, double v1, double height_px, double min_px);
std::vector<Tick> byte_ticks(int64_t max_bytes, double height_px, double min_px);

// "950 ns", "12.3 us", "4.56 ms", "1.20 s".
std::string format_duration(int64_t ns);
// A value axis number: "0.25", "1.5e-05", "12k".
std::string format_value(double v);

bool text_in_box(ImDrawList* list, float font_size, ImVec2 min, ImVec2 max, std::string_view text, ImU32 color);
// Diagonal lines across [min, max] every spacing pixels (folded blocks, areas without data).
void hatch(ImDrawList* list, ImVec2 min, ImVec2 max, ImU32 color, float spacing, float thickness);
// A line from a to b with an arrow head at b.
void arrow(ImDrawList* list, ImVec2 a, ImVec2 b, ImU32 color, float thickness, float head);

}  // namespace rt::viz::draw
