#include "rt/viz/draw/timeline_draw.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/error.h"
#include "rt/viz/draw/draw_style.h"

namespace rt::viz::draw {

namespace {

EventHue hue_of(const TimelineModel& model, const EventRef& e) {
  const prof::SessionData& d = model.data();
  switch (model.source(e)) {
    case EventSource::Step: return EventHue::Step;
    case EventSource::Collective: return EventHue::Collective;
    case EventSource::Op:
      switch (d.ops[model.record(e)].kind) {
        case prof::OpKind::BackwardNode: return EventHue::BackwardNode;
        case prof::OpKind::UserRange: return EventHue::UserRange;
        case prof::OpKind::Op: return EventHue::Op;
      }
      return EventHue::Op;
    case EventSource::Gpu:
      switch (d.gpu[model.record(e)].kind) {
        case prof::GpuActivityKind::Kernel: return EventHue::Kernel;
        case prof::GpuActivityKind::Memcpy: return EventHue::Memcpy;
        case prof::GpuActivityKind::Memset: return EventHue::Memset;
        default: return EventHue::CudaApi;
      }
  }
  return EventHue::Op;
}

}  // namespace

TimelineDraw::TimelineDraw(std::shared_ptr<const prof::SessionData> data) : data_(data), model_(std::move(data)) {
  view_.set_extent(model_.first_ns(), std::max(model_.last_ns(), model_.first_ns()));
  view_.fit_all();
  update_counter_ranges(0);
}

void TimelineDraw::update_counter_ranges(size_t first_new_sample) {
  for (size_t i = first_new_sample; i < data_->counters.size(); ++i) {
    const double v = data_->counters[i].value;
    if (!std::isfinite(v)) continue;
    ValueRange& r = counter_ranges_[data_->strings.at(data_->counters[i].name)];
    r.lo = r.any ? std::min(r.lo, float(v)) : float(v);
    r.hi = r.any ? std::max(r.hi, float(v)) : float(v);
    r.any = true;
  }
  counter_min_.clear();
  counter_max_.clear();
  for (const Track& t : model_.tracks()) {
    float lo = 0, hi = 0;
    if (t.id.kind == TrackKind::Counter)
      if (auto it = counter_ranges_.find(t.name); it != counter_ranges_.end()) lo = it->second.lo, hi = it->second.hi;
    if (hi <= lo) {  // a constant: draw it through the middle
      const float d = std::max(std::fabs(lo) * 0.5f, 1e-6f);
      lo -= d;
      hi += d;
    }
    counter_min_.push_back(lo);
    counter_max_.push_back(hi);
  }
}

void TimelineDraw::append(const prof::SessionGrowth& growth) {
  const bool fitted = view_.t0() <= model_.first_ns() && view_.t1() >= model_.last_ns();
  std::optional<std::pair<EventSource, uint32_t>> selected;
  if (selected_) selected = {model_.source(*selected_), model_.record(*selected_)};
  const std::optional<int64_t> search_at = search_ && search_->current()
                                               ? std::optional(model_.start_ns(search_->matches()[*search_->current()]))
                                               : std::nullopt;
  model_.append(growth);
  flows_.reset();
  hovered_.reset();
  view_.set_extent(model_.first_ns(), std::max(model_.last_ns(), model_.first_ns()));
  if (fitted) view_.fit_all();
  update_counter_ranges(growth.counters);
  selected_.reset();
  if (selected) selected_ = model_.find(selected->first, selected->second);
  if (search_ && search_text_[0]) {
    search_.emplace(model_, search_text_.data());
    if (search_at) search_->first_at_or_after(*search_at);
  }
  if (range_) range_rows_ = range_stats(model_, range_->first, range_->second);
}

const FlowIndex& TimelineDraw::flows() {
  if (!flows_) flows_.emplace(model_);
  return *flows_;
}

int64_t TimelineDraw::time_origin() const {
  const int64_t start = model_.data().start_ns;
  return start > 0 && start <= model_.first_ns() ? start : model_.first_ns();
}

void TimelineDraw::set_window(int64_t t0, int64_t t1) { view_.set_window(t0, t1); }
void TimelineDraw::fit_all() { view_.fit_all(); }
void TimelineDraw::select(std::optional<EventRef> event) { selected_ = event; }

float TimelineDraw::track_height(uint32_t track) const {
  const Track& t = model_.tracks()[track];
  if (t.id.kind == TrackKind::Counter) return row_height_ * 2.6f;
  return row_height_ * float(std::max<size_t>(1, t.levels.size()));
}

void TimelineDraw::draw(ImVec2 size, float scale, TimeCursor* cursor) {
  ImDrawList* list = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end{origin.x + size.x, origin.y + size.y};
  list->AddRectFilled(origin, end, palette::kBackground);
  layout_ = {};
  if (model_.event_count() == 0) {
    const char* text = "This session recorded no events";
    const ImVec2 ts = ImGui::CalcTextSize(text);
    list->AddText({origin.x + (size.x - ts.x) * 0.5f, origin.y + (size.y - ts.y) * 0.5f}, palette::kTextDim, text);
    ImGui::Dummy(size);
    return;
  }
  const float font = ImGui::GetFontSize();
  scale_ = scale;
  row_height_ = std::round(font + 7 * scale);

  ImGui::SetCursorScreenPos({origin.x + 6 * scale, origin.y + 5 * scale});
  draw_toolbar(scale);
  ImVec2 pos{origin.x, origin.y + ImGui::GetFrameHeight() + 10 * scale};
  draw_banner(list, pos, size.x, scale);

  float gutter = 100 * scale;
  for (const Track& t : model_.tracks()) gutter = std::max(gutter, ImGui::CalcTextSize(t.name.c_str()).x + 24 * scale);
  gutter = std::min(gutter, std::max(100 * scale, size.x * 0.3f));
  const float ruler_h = std::round(font * 1.6f + 4 * scale);
  layout_.gutter_width = gutter;
  layout_.row_height = row_height_;
  layout_.canvas_min = {origin.x + gutter, pos.y + ruler_h};
  layout_.canvas_max = end;
  if (layout_.canvas_max.x - layout_.canvas_min.x < 20 || layout_.canvas_max.y - layout_.canvas_min.y < 10) {
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
    return;
  }
  view_.set_width(layout_.canvas_max.x - layout_.canvas_min.x);

  if (cursor) follower_.follow(*cursor, view_);
  handle_input(scale, cursor);
  if (cursor) follower_.publish(*cursor, view_);

  build_frame(model_, view_, frame_);
  list->AddRectFilled({origin.x, pos.y}, {end.x, layout_.canvas_min.y}, palette::kPanel);
  draw_ruler(list, {layout_.canvas_min.x, pos.y}, {end.x, layout_.canvas_min.y}, scale);
  list->AddLine({origin.x, layout_.canvas_min.y}, {end.x, layout_.canvas_min.y}, palette::kSeparator);
  draw_tracks(list, scale);

  list->PushClipRect(layout_.canvas_min, layout_.canvas_max, true);
  if (range_) {
    const float x0 = layout_.canvas_min.x + float(view_.x_of(range_->first));
    const float x1 = layout_.canvas_min.x + float(view_.x_of(range_->second));
    list->AddRectFilled({x0, layout_.canvas_min.y}, {x1, end.y}, palette::kRange);
    list->AddLine({x0, layout_.canvas_min.y}, {x0, end.y}, palette::kAccent, scale);
    list->AddLine({x1, layout_.canvas_min.y}, {x1, end.y}, palette::kAccent, scale);
  }
  if (cursor && cursor->session == data_.get() && cursor->hover_ns && cursor->hover_owner != this) {
    const float x = layout_.canvas_min.x + float(view_.x_of(*cursor->hover_ns));
    list->AddLine({x, layout_.canvas_min.y}, {x, end.y}, palette::kCursor, scale);
  }
  draw_flows(list, scale);
  list->PopClipRect();
  draw_details(scale);
  draw_range_stats(scale);
  ImGui::SetCursorScreenPos(end);
}

void TimelineDraw::draw_tracks(ImDrawList* list, float scale) {
  const ImVec2 cmin = layout_.canvas_min, cmax = layout_.canvas_max;
  const float gutter_x = cmin.x - layout_.gutter_width;
  const float pad = 6 * scale;
  float total = 0;
  for (uint32_t t = 0; t < model_.tracks().size(); ++t) total += track_height(t) + pad;
  scroll_y_ = std::clamp(scroll_y_, 0.0f, std::max(0.0f, total - (cmax.y - cmin.y) + pad));

  float top = cmin.y - scroll_y_ + pad * 0.5f;
  for (uint32_t t = 0; t < model_.tracks().size(); ++t) {
    const Track& track = model_.tracks()[t];
    const float h = track_height(t);
    if (top + h >= cmin.y && top <= cmax.y) {
      layout_.tracks.push_back({t, top, h});
      // Odd rows are banded; even ones show the background draw() filled in: filling them again would shade
      // those pixels twice, which a software rasteriser (Mesa's llvmpipe) pays for in full.
      list->PushClipRect({gutter_x, cmin.y}, cmax, true);
      if (t % 2) list->AddRectFilled({cmin.x, top - pad * 0.5f}, {cmax.x, top + h + pad * 0.5f}, palette::kPanelAlt);
      list->AddLine({gutter_x, top + h + pad * 0.5f}, {cmax.x, top + h + pad * 0.5f}, palette::kGrid);
      list->PopClipRect();

      list->PushClipRect({gutter_x, cmin.y}, {cmin.x, cmax.y}, true);
      list->AddRectFilled({gutter_x, top - pad * 0.5f}, {cmin.x, top + h + pad * 0.5f}, palette::kPanel);
      const ImU32 marker = track.id.kind == TrackKind::GpuStream ? event_color(EventHue::Kernel, "")
                           : track.id.kind == TrackKind::Counter ? series_color(0)
                           : track.id.kind == TrackKind::Steps   ? event_color(EventHue::Step, "")
                                                                 : palette::kAccent;
      list->AddRectFilled({gutter_x, top}, {gutter_x + 3 * scale, top + row_height_}, marker);
      text_in_box(list, ImGui::GetFontSize(), {gutter_x + 9 * scale, top}, {cmin.x - 6 * scale, top + row_height_},
                  track.name, palette::kText);
      if (track.id.kind == TrackKind::Counter && !track.counter_values.empty()) {
        const std::string last = "last " + format_value(track.counter_values.back());
        text_in_box(list, ImGui::GetFontSize(), {gutter_x + 9 * scale, top + row_height_},
                    {cmin.x - 6 * scale, top + 2 * row_height_}, last, palette::kTextDim);
      }
      list->PopClipRect();

      list->PushClipRect(cmin, cmax, true);
      if (track.id.kind == TrackKind::Counter) draw_counter(list, frame_.tracks[t], top, h, scale);
      else draw_track(list, frame_.tracks[t], top, scale);
      list->PopClipRect();
    }
    top += h + pad;
  }
  hit_rows_ = layout_.tracks;
  list->AddLine({cmin.x, cmin.y}, {cmin.x, cmax.y}, palette::kSeparator);
  list->PushClipRect(cmin, cmax, true);
  draw_steps(list, scale);
  list->PopClipRect();
}

void TimelineDraw::draw_track(ImDrawList* list, const TrackFrame& tf, float top, float scale) {
  const float font = ImGui::GetFontSize();
  const float left = layout_.canvas_min.x;
  for (const LevelFrame& lf : tf.levels) {
    const float y0 = top + float(lf.level) * row_height_;
    const float y1 = y0 + row_height_ - 2 * scale;
    for (const DrawItem& item : lf.items) {
      float x0 = left + float(view_.x_of(item.start_ns));
      float x1 = left + float(view_.x_of(item.end_ns));
      x0 = std::max(x0, left - 2);
      x1 = std::min(std::max(x1, x0 + 1), layout_.canvas_max.x + 2);
      if (item.folded()) {
        list->AddRectFilled({x0, y0}, {x1, y1}, palette::kFolded);
        if (x1 - x0 > 4 * scale) hatch(list, {x0, y0}, {x1, y1}, palette::kFoldedHatch, 5 * scale, scale);
        const std::string count = std::to_string(item.count);
        const float tw = ImGui::CalcTextSize(count.c_str()).x;
        if (x1 - x0 > tw + 8 * scale) {
          const float cx = (x0 + x1 - tw) * 0.5f;
          list->AddRectFilled({cx - 3 * scale, y0 + 2 * scale}, {cx + tw + 3 * scale, y1 - 2 * scale}, palette::kFolded);
          text_in_box(list, font, {cx, y0}, {cx + tw + 1, y1}, count, palette::kText);
        }
        continue;
      }
      const EventRef e{tf.track, lf.level, item.first};
      const std::string name = model_.name(e);
      const EventHue hue = hue_of(model_, e);
      const ImU32 fill = event_color(hue, name);
      list->AddRectFilled({x0, y0}, {x1, y1}, fill);
      if (hue == EventHue::BackwardNode)
        list->AddRectFilled({x0, y0}, {x1, y0 + std::max(2.0f, 2 * scale)}, palette::kBackwardFlow);
      if (selected_ == e) list->AddRect({x0 - 1, y0 - 1}, {x1 + 1, y1 + 1}, palette::kSelection, 0, 0, 2 * scale);
      else if (hovered_ == e) list->AddRect({x0, y0}, {x1, y1}, IM_COL32(255, 255, 255, 150), 0, 0, scale);
      const float tx0 = std::max(x0, left) + 4 * scale, tx1 = std::min(x1, layout_.canvas_max.x) - 3 * scale;
      if (tx1 - tx0 > font) {
        const std::string labelled = name + "  " + format_duration(item.end_ns - item.start_ns);
        const ImU32 text = text_color_on(fill);
        if (ImGui::CalcTextSize(labelled.c_str()).x <= tx1 - tx0) text_in_box(list, font, {tx0, y0}, {tx1, y1}, labelled, text);
        else text_in_box(list, font, {tx0, y0}, {tx1, y1}, name, text);
      }
    }
  }
}

void TimelineDraw::draw_counter(ImDrawList* list, const TrackFrame& tf, float top, float height, float scale) {
  const float left = layout_.canvas_min.x;
  const float lo = counter_min_[tf.track], hi = counter_max_[tf.track];
  const float y0 = top + 3 * scale, y1 = top + height - 3 * scale;
  auto y_of = [&](double v) { return y1 - float((v - lo) / (hi - lo)) * (y1 - y0); };
  const ImU32 color = series_color(0);
  list->AddLine({left, y1}, {layout_.canvas_max.x, y1}, palette::kGrid);
  std::vector<ImVec2> points;
  points.reserve(tf.counter.size() * 2);
  for (const ScalarColumn& c : tf.counter) {
    if (c.count == 0 || !std::isfinite(c.min)) continue;
    const float x = left + float(c.pixel) + 0.5f;
    if (c.max > c.min) list->AddLine({x, y_of(c.min)}, {x, y_of(c.max)}, color, scale);
    points.push_back({x, y_of(c.first)});
    if (c.last != c.first) points.push_back({x, y_of(c.last)});
  }
  if (points.size() >= 2) list->AddPolyline(points.data(), int(points.size()), color, 0, 1.5f * scale);
  for (const ImVec2& p : points)
    if (tf.counter.size() < 200) list->AddCircleFilled(p, 2.2f * scale, color);
  const float small = ImGui::GetFontSize() * 0.85f;
  list->AddText(ImGui::GetFont(), small, {left + 4 * scale, y0 - 2 * scale}, palette::kTextDim, format_value(hi).c_str());
  list->AddText(ImGui::GetFont(), small, {left + 4 * scale, y1 - small}, palette::kTextDim, format_value(lo).c_str());
}

void TimelineDraw::draw_steps(ImDrawList* list, float scale) {
  if (model_.tracks().empty() || model_.tracks()[0].id.kind != TrackKind::Steps) return;
  const TrackFrame& tf = frame_.tracks[0];
  for (const LevelFrame& lf : tf.levels)
    for (const DrawItem& item : lf.items) {
      const float x = layout_.canvas_min.x + float(view_.x_of(item.start_ns));
      list->AddLine({x, layout_.canvas_min.y}, {x, layout_.canvas_max.y}, IM_COL32(160, 190, 230, 70), scale);
    }
}

}  // namespace rt::viz::draw
