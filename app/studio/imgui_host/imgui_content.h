// imgui_host/imgui_content.h — what a Dear ImGui view implements to be drawn by ImGuiHostWidget or
// render_to_image.
//
//   class ScalarsView final : public rt::studio::ImGuiContent {
//    public:
//     void draw(rt::studio::ImGuiFrame& frame) override {
//       ImGui::Text("loss %.4f", model_.last());
//       ImGui::GetWindowDrawList()->AddLine(a, b, color, 1.0f * frame.scale());
//     }
//     bool wants_live_updates() const override { return model_.receiving(); }
//   };
//
//   auto* host = new ImGuiHostWidget(parent);
//   host->setContent(std::make_unique<ScalarsView>(model));
//
// Contracts:
// - draw() runs on the GUI thread between ImGui::NewFrame and ImGui::Render, with the host's ImGui context
//   current, inside one window that covers the whole widget (no title bar, no padding, no saved settings).
//   ImGui coordinates are device pixels: fonts and style sizes are already multiplied by frame.scale(), and
//   sizes the content chooses itself (line widths, margins) should be too.
// - Frames are drawn on demand only: after input, after ImGuiHostWidget::requestFrame(), and at most 60 times a
//   second while wants_live_updates() or ImGuiHostWidget::setLive(true). Content that animates for a moment calls
//   frame.request_another_frame(); content fed by a model connects the model's change signal to requestFrame().
// - An exception escaping draw() is reported inside the view (and by qWarning) instead of the content; the host
//   unwinds the ImGui windows and stacks draw() left open and tries the content again on the next frame.
#pragma once
#include <imgui.h>

#include <cstdint>

namespace rt::studio {

class ImGuiFrame {
 public:
  ImGuiFrame(ImVec2 size, float scale, double delta_seconds, std::uint64_t index)
      : size_(size), scale_(scale), delta_seconds_(delta_seconds), index_(index) {}

  // The drawable area in device pixels (the host window's size).
  ImVec2 size() const { return size_; }
  // Device pixels per logical pixel (QWidget::devicePixelRatioF, or the offscreen render's scale).
  float scale() const { return scale_; }
  // Seconds since the previous frame of this host (1/60 for the first).
  double delta_seconds() const { return delta_seconds_; }
  // 0 for the first frame of this host, then one more per frame.
  std::uint64_t index() const { return index_; }

  // Asks for one more frame soon after this one (at most 60 Hz), e.g. while a short animation runs.
  void request_another_frame() { another_frame_requested_ = true; }
  bool another_frame_requested() const { return another_frame_requested_; }

 private:
  ImVec2 size_;
  float scale_;
  double delta_seconds_;
  std::uint64_t index_;
  bool another_frame_requested_ = false;
};

class ImGuiContent {
 public:
  virtual ~ImGuiContent() = default;
  virtual void draw(ImGuiFrame& frame) = 0;
  // True while the content shows data that keeps arriving (a running training): the host then redraws at up to
  // 60 Hz without being asked. Read after every frame.
  virtual bool wants_live_updates() const { return false; }
};

}  // namespace rt::studio
