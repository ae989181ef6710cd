#include "rt/viz/draw/memory_draw.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {

namespace {

constexpr prof::MemoryCategoryId kCategories[] = {
    prof::MemoryCategoryId::Parameter,      prof::MemoryCategoryId::Gradient,  prof::MemoryCategoryId::Activation,
    prof::MemoryCategoryId::OptimizerState, prof::MemoryCategoryId::Temporary, prof::MemoryCategoryId::Other};

}  // namespace

ImU32 category_color(prof::MemoryCategoryId category) {
  switch (category) {
    case prof::MemoryCategoryId::Parameter: return IM_COL32(77, 140, 220, 255);
    case prof::MemoryCategoryId::Gradient: return IM_COL32(236, 150, 60, 255);
    case prof::MemoryCategoryId::Activation: return IM_COL32(92, 184, 110, 255);
    case prof::MemoryCategoryId::OptimizerState: return IM_COL32(170, 120, 220, 255);
    case prof::MemoryCategoryId::Temporary: return IM_COL32(225, 205, 90, 255);
    case prof::MemoryCategoryId::Other: return IM_COL32(140, 144, 152, 255);
  }
  return IM_COL32(140, 144, 152, 255);
}

MemoryDraw::MemoryDraw(std::shared_ptr<const prof::SessionData> data)
    : data_(data ? std::move(data) : throw rt::ValueError("MemoryDraw: the session data is null")), model_(*data_) {
  const auto [first, last] = extent();
  view_.set_extent(first, last);
  view_.fit_all();
}

std::pair<int64_t, int64_t> MemoryDraw::extent() const {
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const DeviceMemory& d : model_.devices())
    if (!d.times.empty()) first = std::min(first, d.times.front()), last = std::max(last, d.times.back());
  if (first == INT64_MAX) first = last = data_->start_ns;
  // The session's own extent, when known, so the chart lines up with the timeline.
  if (data_->start_ns > 0) first = std::min(first, data_->start_ns);
  if (data_->end_ns > 0) last = std::max(last, data_->end_ns);
  return {first, std::max(first, last)};
}

void MemoryDraw::append(const prof::SessionGrowth& growth) {
  const auto [old_first, old_last] = extent();
  const bool fitted = view_.t0() <= old_first && view_.t1() >= old_last;
  model_.append(*data_, growth);
  const auto [first, last] = extent();
  view_.set_extent(first, last);
  if (fitted) view_.fit_all();
  hover_ns_.reset();
}

void MemoryDraw::set_window(int64_t t0, int64_t t1) { view_.set_window(t0, t1); }
void MemoryDraw::fit_all() { view_.fit_all(); }

void MemoryDraw::draw(ImVec2 size, float scale, TimeCursor* cursor) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end{origin.x + size.x, origin.y + size.y};
  const float font = ImGui::GetFontSize();
  const float list_w = size.x > 900 * scale ? std::min(380 * scale, size.x * 0.32f) : 0;
  // The block list paints its own panel: the background stops at it, so no pixel is shaded twice there.
  list->AddRectFilled(origin, {end.x - (model_.devices().empty() ? 0 : list_w), end.y}, palette::kBackground);
  layout_ = {};
  if (model_.devices().empty()) {
    const auto it = data_->metadata.find("profile_memory");
    const char* text = it != data_->metadata.end() && it->second == "no"
                           ? "Memory was not profiled in this session (record with profile_memory = true)"
                           : "This session recorded no memory events";
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText({origin.x + (size.x - ts.x) * 0.5f, origin.y + (size.y - ts.y) * 0.5f}, palette::kTextDim, text);
    ImGui::Dummy(size);
    return;
  }
  const float header_h = font + 14 * scale;
  if (list_w > 0) list->AddRectFilled({end.x - list_w, origin.y}, {end.x, origin.y + header_h}, palette::kBackground);
  draw_legend(list, {origin.x, origin.y}, size.x, scale);

  plot_left_ = origin.x + 86 * scale;
  const ImVec2 charts_min{origin.x, origin.y + header_h};
  const ImVec2 charts_max{end.x - list_w, end.y};
  const float axis_h = font + 10 * scale;
  const float plot_w = charts_max.x - 14 * scale - plot_left_;
  if (plot_w < 20 || charts_max.y - charts_min.y < axis_h + 20) {
    if (list_w > 0) list->AddRectFilled({end.x - list_w, origin.y}, end, palette::kBackground);
    ImGui::Dummy(size);
    return;
  }
  view_.set_width(plot_w);
  if (cursor) follower_.follow(*cursor, view_);
  handle_input({plot_left_, charts_min.y}, {plot_left_ + plot_w, charts_max.y - axis_h}, scale, cursor);
  if (cursor) follower_.publish(*cursor, view_);
  std::optional<int64_t> cursor_ns = hover_ns_;
  if (!cursor_ns && cursor && cursor->session == data_.get() && cursor->hover_ns) cursor_ns = cursor->hover_ns;

  const size_t n = model_.devices().size();
  const float chart_h = (charts_max.y - charts_min.y - axis_h) / float(n);
  for (size_t i = 0; i < n; ++i) {
    const ImVec2 cmin{plot_left_, charts_min.y + chart_h * float(i) + (i ? 8 * scale : 0) + font * 0.5f};
    const ImVec2 cmax{plot_left_ + plot_w, charts_min.y + chart_h * float(i + 1)};
    draw_chart(list, model_.devices()[i], cmin, cmax, scale, cursor_ns);
  }
  // The time axis under the last chart.
  const int64_t origin_ns = data_->start_ns;
  const float axis_y = charts_max.y - axis_h;
  for (const Tick& t : time_ticks(view_.t0() - origin_ns, view_.t1() - origin_ns, plot_w, 110 * scale)) {
    const float x = plot_left_ + float(view_.x_of(int64_t(t.value) + origin_ns));
    list->AddLine({x, axis_y}, {x, axis_y + 5 * scale}, palette::kTextDim, scale);
    const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
    list->AddText({std::clamp(x - tw * 0.5f, plot_left_, plot_left_ + plot_w - tw), axis_y + 5 * scale},
                  palette::kTextDim, t.label.c_str());
  }

  const int64_t list_time = cursor_ns ? *cursor_ns : model_.devices().front().peak.time_ns;
  layout_.list_time_ns = list_time;
  if (list_w > 0) draw_block_list(list, {end.x - list_w, origin.y + header_h}, end, scale, list_time);

  if (hover_ns_ && hover_y_) {
    for (const MemoryLayout::Chart& c : layout_.charts) {
      if (*hover_y_ < c.plot_min.y || *hover_y_ > c.plot_max.y) continue;
      const int64_t offset = int64_t(double(c.plot_max.y - *hover_y_) / (c.plot_max.y - c.plot_min.y) * double(c.axis_max_bytes));
      const MemoryBlock* b = model_.blocks().hit_test(c.device, *hover_ns_, offset);
      const DeviceMemory* dev = model_.device(c.device);
      ImGui::BeginTooltip();
      const MemorySample s = dev->at(*hover_ns_);
      ImGui::Text("%s  +%s  live %s", dev->label.c_str(), format_duration(*hover_ns_ - data_->start_ns).c_str(),
                  format_bytes(s.total).c_str());
      if (b) {
        const std::string& op = model_.blocks().op_name(*b);
        ImGui::Separator();
        ImGui::Text("%s", op.empty() ? "(outside any op)" : op.c_str());
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(category_color(b->category)), "%s  %s",
                           format_bytes(b->bytes).c_str(), category_label(b->category));
        ImGui::TextDisabled("%s", model_.blocks().hover_text(*b).c_str());
      }
      ImGui::EndTooltip();
    }
  }
  ImGui::SetCursorScreenPos(end);
}

void MemoryDraw::draw_legend(ImDrawList* list, ImVec2 min, float width, float scale) {
  const float font = ImGui::GetFontSize();
  float x = min.x + 10 * scale;
  const float y = min.y + 7 * scale;
  list->AddText({x, y}, palette::kText, "Memory");
  x += ImGui::CalcTextSize("Memory").x + 18 * scale;
  for (prof::MemoryCategoryId c : kCategories) {
    list->AddRectFilled({x, y + font * 0.2f}, {x + font * 0.7f, y + font * 0.9f}, category_color(c), 2 * scale);
    x += font * 0.7f + 5 * scale;
    list->AddText({x, y}, palette::kText, category_label(c));
    x += ImGui::CalcTextSize(category_label(c)).x + 16 * scale;
  }
  const DeviceMemory& first = model_.devices().front();
  const std::string peak = fmt::format("peak {} at +{}", format_bytes(first.peak.total),
                                       format_duration(first.peak.time_ns - data_->start_ns));
  const float pw = ImGui::CalcTextSize(peak.c_str()).x;
  if (x + pw + 20 * scale < min.x + width) list->AddText({min.x + width - pw - 12 * scale, y}, palette::kPeak, peak.c_str());
  if (!model_.warnings().empty()) {
    std::string text;
    for (const MemoryWarning& w : model_.warnings()) text += (text.empty() ? "" : "; ") + w.text();
    if (ImGui::IsMouseHoveringRect(min, {min.x + width, min.y + font + 14 * scale})) ImGui::SetTooltip("%s", text.c_str());
  }
}

void MemoryDraw::draw_chart(ImDrawList* list, const DeviceMemory& dev, ImVec2 min, ImVec2 max, float scale,
                            std::optional<int64_t> cursor_ns) {
  MemoryLayout::Chart chart;
  chart.device = dev.device;
  chart.plot_min = min;
  chart.plot_max = max;
  const float h = max.y - min.y;
  const int64_t axis_max = std::max<int64_t>(1, int64_t(double(dev.peak.total) * 1.12));
  chart.axis_max_bytes = axis_max;
  list->AddRectFilled(min, max, palette::kPanelAlt);
  for (const Tick& t : byte_ticks(axis_max, h, 40 * scale)) {
    const float y = max.y - float(t.value / double(axis_max)) * h;
    list->AddLine({min.x, y}, {max.x, y}, palette::kGrid, scale);
    const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
    list->AddText({min.x - tw - 8 * scale, y - ImGui::GetFontSize() * 0.5f}, palette::kTextDim, t.label.c_str());
  }
  list->AddText({min.x + 6 * scale, min.y + 4 * scale}, palette::kText, dev.label.c_str());

  model_.columns(dev.device, view_.t0(), view_.t1(), view_.width_px(), columns_);
  list->PushClipRect(min, max, true);
  for (const MemoryColumn& c : columns_) {
    const float x = min.x + float(c.pixel);
    double below = 0;
    for (prof::MemoryCategoryId cat : kCategories) {
      const int64_t b = c.bytes[size_t(cat)];
      if (b <= 0) continue;
      const float y0 = max.y - float((below + double(b)) / double(axis_max)) * h;
      const float y1 = max.y - float(below / double(axis_max)) * h;
      list->AddRectFilled({x, y0}, {x + 1.0f, y1}, category_color(cat));
      below += double(b);
    }
    if (c.total > 0) list->AddRectFilled({x, max.y - float(double(c.total) / double(axis_max)) * h - scale}, {x + 1.0f, max.y - float(double(c.total) / double(axis_max)) * h}, IM_COL32(255, 255, 255, 110));
  }
  if (dev.peak.total > 0 && dev.peak.time_ns >= view_.t0() && dev.peak.time_ns <= view_.t1()) {
    const float x = std::floor(min.x + float(view_.x_of(dev.peak.time_ns))) + 0.5f;
    chart.peak_x = x;
    const float y_peak = max.y - float(double(dev.peak.total) / double(axis_max)) * h;
    for (float y = min.y; y < max.y; y += 8 * scale)
      list->AddLine({x, y}, {x, std::min(max.y, y + 5 * scale)}, palette::kPeak, 2 * scale);
    list->AddTriangleFilled({x - 6 * scale, y_peak - 10 * scale}, {x + 6 * scale, y_peak - 10 * scale}, {x, y_peak - 1},
                            palette::kPeak);
    const std::string label = "peak " + format_bytes(dev.peak.total);
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    const float lx = x + 8 * scale + tw < max.x ? x + 8 * scale : x - 8 * scale - tw;
    list->AddText({lx, y_peak - ImGui::GetFontSize() - 4 * scale}, palette::kPeak, label.c_str());
  }
  if (cursor_ns && *cursor_ns >= view_.t0() && *cursor_ns <= view_.t1()) {
    const float x = min.x + float(view_.x_of(*cursor_ns));
    list->AddLine({x, min.y}, {x, max.y}, palette::kCursor, scale);
  }
  list->PopClipRect();
  list->AddRect(min, max, palette::kSeparator);
  layout_.charts.push_back(chart);
}

void MemoryDraw::draw_block_list(ImDrawList* list, ImVec2 min, ImVec2 max, float scale, int64_t time_ns) {
  const float font = ImGui::GetFontSize();
  const float pad = 10 * scale;
  list->AddRectFilled(min, max, palette::kPanel);
  list->AddLine(min, {min.x, max.y}, palette::kSeparator);
  float y = min.y + pad * 0.5f;
  list->AddText({min.x + pad, y}, palette::kText,
                fmt::format("Largest live blocks at +{}", format_duration(time_ns - data_->start_ns)).c_str());
  y += font + 8 * scale;
  const float line = font + 5 * scale;
  const float bytes_x = max.x - pad - 80 * scale;
  for (const DeviceMemory& dev : model_.devices()) {
    if (model_.devices().size() > 1) {
      list->AddText({min.x + pad, y}, palette::kTextDim, dev.label.c_str());
      y += line;
    }
    const size_t rows = size_t(std::max(1.0f, (max.y - y - pad) / line / float(model_.devices().size())));
    const auto blocks = model_.blocks().largest_at(dev.device, time_ns, std::min<size_t>(rows, 14));
    if (blocks.empty()) {
      list->AddText({min.x + pad, y}, palette::kTextDim, "nothing live");
      y += line;
    }
    for (const MemoryBlock* b : blocks) {
      if (y + line > max.y) break;
      list->AddRectFilled({min.x + pad, y + font * 0.2f}, {min.x + pad + font * 0.6f, y + font * 0.8f},
                          category_color(b->category), 2 * scale);
      const std::string& op = model_.blocks().op_name(*b);
      const std::string name = (op.empty() ? std::string("(outside any op)") : op) + "  " + category_label(b->category);
      text_in_box(list, font, {min.x + pad + font, y}, {bytes_x - 6 * scale, y + font}, name, palette::kText);
      list->AddText({bytes_x, y}, palette::kText, format_bytes(b->bytes).c_str());
      y += line;
    }
  }
}

void MemoryDraw::handle_input(ImVec2 min, ImVec2 max, float scale, TimeCursor* cursor) {
  ImGui::SetCursorScreenPos(min);
  ImGui::InvisibleButton("##memory", {max.x - min.x, max.y - min.y});
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  const double mx = io.MousePos.x - min.x;
  if (hovered && io.MouseWheel != 0) view_.zoom(std::pow(1.25, double(io.MouseWheel)), mx);
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3 * scale)) view_.pan(io.MouseDelta.x);
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view_.fit_all();
  hover_ns_.reset();
  hover_y_.reset();
  if (hovered) {
    hover_ns_ = view_.time_at(mx);
    hover_y_ = io.MousePos.y;
  }
  if (cursor && cursor->session == data_.get()) {
    if (hovered) {
      cursor->hover_ns = hover_ns_;
      cursor->hover_owner = this;
    } else if (cursor->hover_owner == this) {
      cursor->hover_ns.reset();
      cursor->hover_owner = nullptr;
    }
  }
}

}  // namespace rt::viz::draw
