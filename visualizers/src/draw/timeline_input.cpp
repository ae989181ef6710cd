// TimelineDraw: the toolbar (search), mouse and keyboard handling, selection and range selection.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rt/viz/draw/draw_style.h"
#include "rt/viz/draw/timeline_draw.h"

namespace rt::viz::draw {

void TimelineDraw::set_search(std::string text) {
  text.resize(std::min(text.size(), search_text_.size() - 1));
  std::fill(search_text_.begin(), search_text_.end(), '\0');
  std::memcpy(search_text_.data(), text.data(), text.size());
  search_.emplace(model_, text);
  jump_to_match(search_->first_at_or_after(view_.t0()));
}

void TimelineDraw::select_range(int64_t t0, int64_t t1) {
  if (t1 < t0) std::swap(t0, t1);
  range_ = {t0, t1};
  range_rows_ = range_stats(model_, t0, t1);
}

void TimelineDraw::clear_range() {
  range_.reset();
  range_rows_.clear();
}

void TimelineDraw::center_on(const EventRef& e) {
  const int64_t s = model_.start_ns(e), en = model_.end_ns(e);
  int64_t span = view_.span_ns();
  if (en - s > span * 0.8) span = int64_t(double(en - s) * 1.25) + 1;
  else if (en - s < span / 50) span = std::max<int64_t>(TimelineView::kMinSpanNs, (en - s) * 12);  // zoom in to it
  const int64_t mid = s + (en - s) / 2;
  view_.set_window(mid - span / 2, mid - span / 2 + span);
  float offset = 0;
  const float pad = 6 * scale_;
  for (uint32_t t = 0; t < e.track; ++t) offset += track_height(t) + pad;
  const float visible = layout_.canvas_max.y - layout_.canvas_min.y;
  const float y = offset + float(e.level) * row_height_;
  if (y < scroll_y_ || y + row_height_ > scroll_y_ + visible) scroll_y_ = std::max(0.0f, y - visible * 0.3f);
}

void TimelineDraw::jump_to_match(const EventRef* hit) {
  if (!hit) return;
  selected_ = *hit;
  center_on(*hit);
}

void TimelineDraw::draw_toolbar(float scale) {
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, {6 * scale, 3 * scale});
  ImGui::SetNextItemWidth(220 * scale);
  const bool enter = ImGui::InputTextWithHint("##search", "Search ops (Enter: next)", search_text_.data(),
                                              search_text_.size(), ImGuiInputTextFlags_EnterReturnsTrue);
  if (ImGui::IsItemEdited()) {
    search_.emplace(model_, search_text_.data());
    jump_to_match(search_->first_at_or_after(view_.t0()));
  }
  if (enter && search_) jump_to_match(search_->next());
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && search_) jump_to_match(search_->previous());
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && search_) jump_to_match(search_->next());
  ImGui::SameLine();
  if (search_ && search_text_[0]) {
    if (search_->matches().empty()) ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.45f, 1), "no match");
    else
      ImGui::Text("%zu / %zu", search_->current() ? *search_->current() + 1 : 0, search_->matches().size());
    ImGui::SameLine();
  }
  if (ImGui::Button("Fit")) view_.fit_all();
  ImGui::SameLine();
  const prof::SessionData& d = model_.data();
  const std::string summary =
      fmt::format("{}  |  {} events  |  window {}  |  session {}", d.name.empty() ? "session" : d.name,
                  model_.event_count(), format_duration(view_.span_ns()),
                  format_duration(model_.last_ns() - model_.first_ns()));
  ImGui::TextDisabled("%s", summary.c_str());
  ImGui::PopStyleVar();
}

void TimelineDraw::handle_input(float scale, TimeCursor* cursor) {
  const ImVec2 cmin = layout_.canvas_min, cmax = layout_.canvas_max;
  ImGui::SetCursorScreenPos(cmin);
  ImGui::InvisibleButton("##tracks", {cmax.x - cmin.x, cmax.y - cmin.y},
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  const ImGuiIO& io = ImGui::GetIO();
  const double mx = io.MousePos.x - cmin.x;

  if (hovered && io.MouseWheel != 0) view_.zoom(std::pow(1.25, double(io.MouseWheel)), mx);
  if (hovered && io.MouseWheelH != 0) view_.pan(double(io.MouseWheelH) * 60 * scale);
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3 * scale)) {
    view_.pan(io.MouseDelta.x);
    scroll_y_ -= io.MouseDelta.y;
    dragging_ = true;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) view_.fit_all();

  hovered_.reset();
  const TimelineLayout::TrackRow* row = nullptr;
  for (const TimelineLayout::TrackRow& r : hit_rows_)
    if (io.MousePos.y >= r.top && io.MousePos.y < r.top + r.height) row = &r;
  // Rows come from the previous frame's layout, which this frame redraws before the user sees a change.
  if (hovered && row && !dragging_)
    hovered_ = hit_test(model_, row->track, mx, io.MousePos.y - row->top, view_, {row_height_, 3.0 * scale});
  if (ImGui::IsItemDeactivated() && ImGui::IsMouseReleased(ImGuiMouseButton_Left)) {
    if (!dragging_) selected_ = hovered_;
    dragging_ = false;
  }

  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) range_anchor_ = view_.time_at(mx);
  if (range_anchor_) {
    const int64_t now = view_.time_at(std::clamp(mx, 0.0, view_.width_px()));
    if (ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
      range_ = {std::min(*range_anchor_, now), std::max(*range_anchor_, now)};
    } else {
      if (std::fabs(view_.x_of(now) - view_.x_of(*range_anchor_)) < 3 * scale) clear_range();
      else select_range(*range_anchor_, now);
      range_anchor_.reset();
    }
  }

  if ((hovered || ImGui::IsWindowFocused()) && !io.WantTextInput) {
    const double dt = std::max(1.0 / 240, double(io.DeltaTime));
    const auto down = [](int key) { return key >= 0 && ImGui::IsKeyDown(key); };
    const bool left = down(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)) || down('A');
    const bool right = down(ImGui::GetKeyIndex(ImGuiKey_RightArrow)) || down('D');
    const bool in = down(ImGui::GetKeyIndex(ImGuiKey_UpArrow)) || down('W');
    const bool out = down(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) || down('S');
    if (left) view_.pan(view_.width_px() * dt);
    if (right) view_.pan(-view_.width_px() * dt);
    if (in) view_.zoom(1 + 2.5 * dt, view_.width_px() / 2);
    if (out) view_.zoom(1 / (1 + 2.5 * dt), view_.width_px() / 2);
  }

  if (cursor && cursor->session == data_.get()) {
    if (hovered) {
      cursor->hover_ns = view_.time_at(mx);
      cursor->hover_owner = this;
    } else if (cursor->hover_owner == this) {
      cursor->hover_ns.reset();
      cursor->hover_owner = nullptr;
    }
  }
  if (hovered_ && !active) {
    const EventDetails d = details(model_, *hovered_);
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(d.name.c_str());
    ImGui::TextDisabled("%s  %s  (self %s)", d.kind.c_str(), format_duration(d.duration_ns).c_str(),
                        format_duration(d.self_ns).c_str());
    if (!d.module.empty()) ImGui::TextDisabled("module %s", d.module.c_str());
    if (!d.plugin.empty()) ImGui::TextDisabled("plugin %s", d.plugin.c_str());
    if (!d.group.empty())
      ImGui::TextDisabled("%s %s, group '%s' #%lld%s%s", d.input_shapes.c_str(), d.input_dtypes.c_str(),
                          d.group.c_str(), (long long)d.seq, d.call_site.empty() ? "" : " at ", d.call_site.c_str());
    ImGui::EndTooltip();
  }
}

}  // namespace rt::viz::draw
