// TimelineDraw: what is drawn over or around the tracks — warnings banner, time ruler, flow arrows,
// the details box of the selection and the statistics of a selected range.
#include <fmt/format.h>

#include <algorithm>

#include "rt/viz/draw/draw_style.h"
#include "rt/viz/draw/timeline_draw.h"
#include "rt/viz/memory_timeline_blocks.h"

namespace rt::viz::draw {

namespace {

struct Box {
  ImVec2 min, max;
};

// A translucent panel with a title line and key/value lines; returns its rectangle.
Box text_panel(ImDrawList* list, ImVec2 anchor, bool right_aligned, bool bottom_aligned, float width, float scale,
               const std::string& title, const std::vector<std::pair<std::string, std::string>>& lines) {
  const float font = ImGui::GetFontSize();
  const float pad = 8 * scale;
  const float key_w = 80 * scale;
  std::vector<float> heights;
  float h = font + pad * 2 + 4 * scale;
  for (const auto& [key, value] : lines) {
    const float vh = ImGui::GetFont()->CalcTextSizeA(font, FLT_MAX, width - key_w - pad * 2, value.c_str()).y;
    heights.push_back(std::max(font, vh) + 3 * scale);
    h += heights.back();
  }
  const ImVec2 min{right_aligned ? anchor.x - width : anchor.x, bottom_aligned ? anchor.y - h : anchor.y};
  const Box box{min, {min.x + width, min.y + h}};
  list->AddRectFilled(box.min, box.max, IM_COL32(20, 22, 26, 235), 4 * scale);
  list->AddRect(box.min, box.max, palette::kSeparator, 4 * scale);
  float y = min.y + pad;
  text_in_box(list, font, {min.x + pad, y}, {box.max.x - pad, y + font}, title, palette::kText);
  y += font + 4 * scale;
  for (size_t i = 0; i < lines.size(); ++i) {
    list->AddText({min.x + pad, y}, palette::kTextDim, lines[i].first.c_str());
    list->AddText(ImGui::GetFont(), font, {min.x + pad + key_w, y}, palette::kText, lines[i].second.c_str(), nullptr,
                  width - key_w - pad * 2);
    y += heights[i];
  }
  return box;
}

}  // namespace

void TimelineDraw::draw_banner(ImDrawList* list, ImVec2& pos, float width, float scale) {
  if (model_.warnings().empty() && model_.data().dropped_records == 0) return;
  std::string text;
  for (const TimelineWarning& w : model_.warnings()) text += (text.empty() ? "" : "; ") + w.text();
  if (model_.data().dropped_records)
    text += (text.empty() ? "" : "; ") + fmt::format("{} records were dropped while recording", model_.data().dropped_records);
  const float h = ImGui::GetFontSize() + 8 * scale;
  list->AddRectFilled(pos, {pos.x + width, pos.y + h}, palette::kWarning);
  text_in_box(list, ImGui::GetFontSize(), {pos.x + 10 * scale, pos.y}, {pos.x + width - 10 * scale, pos.y + h},
              "Warning: " + text, IM_COL32(255, 236, 190, 255));
  pos.y += h;
}

void TimelineDraw::draw_ruler(ImDrawList* list, ImVec2 min, ImVec2 max, float scale) {
  const int64_t origin = time_origin();
  list->AddText({min.x - layout_.gutter_width + 9 * scale, min.y + 3 * scale}, palette::kTextDim, "time");
  const auto ticks = time_ticks(view_.t0() - origin, view_.t1() - origin, view_.width_px(), 110 * scale);
  list->PushClipRect(min, max, true);
  for (const Tick& t : ticks) {
    const float x = min.x + float(view_.x_of(int64_t(t.value) + origin));
    list->AddLine({x, max.y - 7 * scale}, {x, max.y}, palette::kTextDim, scale);
    if (x + 3 * scale + ImGui::CalcTextSize(t.label.c_str()).x <= max.x)
      list->AddText({x + 3 * scale, min.y + 3 * scale}, palette::kText, t.label.c_str());
  }
  list->PopClipRect();
  // Minor grid lines through the tracks at the same ticks.
  list->PushClipRect(layout_.canvas_min, layout_.canvas_max, true);
  for (const Tick& t : ticks) {
    const float x = min.x + float(view_.x_of(int64_t(t.value) + origin));
    list->AddLine({x, layout_.canvas_min.y}, {x, layout_.canvas_max.y}, palette::kGrid, scale);
  }
  list->PopClipRect();
}

std::optional<ImVec2> TimelineDraw::event_anchor(const EventRef& e) const {
  float top = -1;
  for (const TimelineLayout::TrackRow& r : layout_.tracks)
    if (r.track == e.track) top = r.top;
  float y;
  if (top >= 0) y = top + (float(e.level) + 0.5f) * row_height_;
  else {
    // Off screen vertically: point at the edge it lies beyond.
    if (layout_.tracks.empty()) return std::nullopt;
    y = e.track < layout_.tracks.front().track ? layout_.canvas_min.y : layout_.canvas_max.y;
  }
  return ImVec2{layout_.canvas_min.x + float(view_.x_of(model_.start_ns(e))), y};
}

void TimelineDraw::draw_flows(ImDrawList* list, float scale) {
  if (!selected_) return;
  for (const Flow& f : flows().for_event(*selected_)) {
    const auto a = event_anchor(f.from), b = event_anchor(f.to);
    if (!a || !b) continue;
    const ImU32 color = f.kind == FlowKind::Launch ? palette::kLaunchFlow : palette::kBackwardFlow;
    list->AddCircleFilled(*a, 3 * scale, color);
    arrow(list, *a, *b, color, 1.6f * scale, 8 * scale);
  }
}

void TimelineDraw::draw_details(float scale) {
  if (!selected_) return;
  const EventDetails d = details(model_, *selected_);
  std::vector<std::pair<std::string, std::string>> lines;
  lines.push_back({"kind", d.kind + " on " + d.track});
  if (!d.module.empty()) lines.push_back({"module", d.module});
  if (!d.plugin.empty()) lines.push_back({"plugin", d.plugin});
  if (!d.input_shapes.empty()) lines.push_back({"shapes", d.input_shapes});
  if (!d.input_dtypes.empty()) lines.push_back({"dtypes", d.input_dtypes});
  if (!d.group.empty()) {
    std::string group = fmt::format("'{}', sequence {}", d.group, d.seq);
    if (d.peer >= 0) group += fmt::format(", {} {}", d.kind == "point-to-point" ? "peer" : "root", d.peer);
    lines.push_back({"group", group});
    lines.push_back({"bytes", format_bytes(int64_t(d.bytes))});
    if (!d.call_site.empty()) lines.push_back({"call site", d.call_site});
    lines.push_back({"queued", format_duration(d.queued_ns)});
  }
  lines.push_back({"start", fmt::format("+{}", format_duration(d.start_ns - time_origin()))});
  lines.push_back({"duration", format_duration(d.duration_ns)});
  lines.push_back({"self", format_duration(d.self_ns)});
  std::string args;
  if (d.sequence_nr >= 0) args += fmt::format("sequence_nr={} ", d.sequence_nr);
  if (d.correlation_id) args += fmt::format("correlation={} ", d.correlation_id);
  if (d.device >= 0) args += fmt::format("device={} stream={} ", d.device, d.stream);
  if (d.bytes && d.group.empty()) args += fmt::format("bytes={} ", d.bytes);
  args += fmt::format("depth={}", d.depth);
  lines.push_back({"args", args});
  const size_t arrows = flows().for_event(*selected_).size();
  if (arrows) lines.push_back({"flows", fmt::format("{} arrow{}", arrows, arrows == 1 ? "" : "s")});
  if (d.repaired) lines.push_back({"note", "times repaired from an inconsistent record"});
  const float width = std::min(420 * scale, (layout_.canvas_max.x - layout_.canvas_min.x) * 0.6f);
  text_panel(ImGui::GetWindowDrawList(), {layout_.canvas_min.x + 8 * scale, layout_.canvas_max.y - 8 * scale}, false,
             true, width, scale, d.name, lines);
}

void TimelineDraw::draw_range_stats(float scale) {
  if (!range_ || range_anchor_) return;
  ImDrawList* list = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const float pad = 8 * scale;
  const size_t shown = std::min<size_t>(range_rows_.size(), 10);
  const float width = std::min(520 * scale, (layout_.canvas_max.x - layout_.canvas_min.x) * 0.7f);
  const float line = font + 4 * scale;
  const float h = pad * 2 + line * float(shown + 2) + (range_rows_.size() > shown ? line : 0);
  const ImVec2 min{layout_.canvas_max.x - width - 8 * scale, layout_.canvas_max.y - h - 8 * scale};
  const ImVec2 max{min.x + width, min.y + h};
  list->AddRectFilled(min, max, IM_COL32(20, 22, 26, 235), 4 * scale);
  list->AddRect(min, max, palette::kSeparator, 4 * scale);
  int64_t events = 0;
  for (const RangeRow& r : range_rows_) events += r.count;
  float y = min.y + pad;
  text_in_box(list, font, {min.x + pad, y}, {max.x - pad, y + line},
              fmt::format("Range +{} .. +{} ({}): {} event{}", format_duration(range_->first - time_origin()),
                          format_duration(range_->second - time_origin()),
                          format_duration(range_->second - range_->first), events, events == 1 ? "" : "s"),
              palette::kText);
  y += line;
  const float c_count = max.x - pad - width * 0.42f, c_total = max.x - pad - width * 0.27f,
              c_self = max.x - pad - width * 0.12f;
  auto row = [&](const std::string& name, const std::string& count, const std::string& total, const std::string& self,
                 ImU32 color) {
    text_in_box(list, font, {min.x + pad + 6 * scale, y}, {c_count - 8 * scale, y + line}, name, color);
    list->AddText({c_count, y + 2 * scale}, color, count.c_str());
    list->AddText({c_total, y + 2 * scale}, color, total.c_str());
    list->AddText({c_self, y + 2 * scale}, color, self.c_str());
    y += line;
  };
  row("op", "count", "total", "self", palette::kTextDim);
  for (size_t i = 0; i < shown; ++i) {
    const RangeRow& r = range_rows_[i];
    list->AddRectFilled({min.x + pad, y + 3 * scale}, {min.x + pad + 3 * scale, y + line - 3 * scale},
                        event_color(EventHue::Op, r.name));
    row(r.name, std::to_string(r.count), format_duration(r.total_ns), format_duration(r.self_ns), palette::kText);
  }
  if (range_rows_.size() > shown)
    row(fmt::format("... {} more", range_rows_.size() - shown), "", "", "", palette::kTextDim);
}

}  // namespace rt::viz::draw
