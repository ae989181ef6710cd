// imgui_host/imgui_canvas.h — one Dear ImGui context and, while attached to an OpenGL context, its OpenGL 3
// renderer. ImGuiHostWidget and render_to_image draw through it; panels never use it directly.
//
//   ImGuiCanvas canvas;                         // creates the ImGui context (not current afterwards)
//   gl_context.makeCurrent(surface);
//   canvas.attach_gl(gl_support(gl_context));   // throws ImGuiHostError when the backend cannot start
//   canvas.set_scale(2.0f);                     // fonts rasterised at 26 px, style sizes doubled
//   FrameResult r = canvas.render(&content, {800, 600}, 1.0 / 60, 0);   // into the bound framebuffer
//   canvas.detach_gl();                         // before the GL context goes (same context current)
//
// Contracts:
// - Several canvases coexist: every method makes its own ImGui context current and restores the previous one
//   (see ImGuiContextScope), so ImGui calls of one never land in another.
// - attach_gl, detach_gl, render and set_scale (while attached) need the attached GL context current.
//   ImGui state (window scroll, widget ids, input) survives detach/attach: a dock that floats into a new
//   top-level window gets a new GL context but keeps its view state.
// - render clears the bound framebuffer to the window background and draws one frame of `content` (or only the
//   background when null) inside a window covering `size` device pixels; it throws ImGuiHostError when detached.
//   Input events are applied by the caller before render, inside an ImGuiContextScope.
#pragma once
#include <imgui.h>

#include <stdexcept>
#include <string>

#include "imgui_host/gl_support.h"
#include "imgui_host/imgui_content.h"

namespace rt::studio {

class ImGuiHostError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Makes `context` the current ImGui context for the scope's lifetime.
class ImGuiContextScope {
 public:
  explicit ImGuiContextScope(ImGuiContext* context) : previous_(ImGui::GetCurrentContext()) {
    ImGui::SetCurrentContext(context);
  }
  ~ImGuiContextScope() { ImGui::SetCurrentContext(previous_); }
  ImGuiContextScope(const ImGuiContextScope&) = delete;
  ImGuiContextScope& operator=(const ImGuiContextScope&) = delete;

 private:
  ImGuiContext* previous_;
};

struct FrameResult {
  ImGuiMouseCursor cursor = ImGuiMouseCursor_Arrow;
  bool another_frame_requested = false;  // the content called ImGuiFrame::request_another_frame()
  std::string content_error;             // what() of an exception that escaped the content's draw()
};

class ImGuiCanvas {
 public:
  static constexpr float kBaseFontPixels = 13.0f;

  ImGuiCanvas();
  ~ImGuiCanvas();  // the canvas must be detached (detach_gl) before
  ImGuiCanvas(const ImGuiCanvas&) = delete;
  ImGuiCanvas& operator=(const ImGuiCanvas&) = delete;

  ImGuiContext* context() const { return context_; }
  bool attached() const { return attached_; }

  // Throws ImGuiHostError when `gl` is unusable or the backend fails to start; the canvas stays detached then.
  void attach_gl(const GlSupport& gl);
  void detach_gl();

  // Device pixels per logical pixel. A change rebuilds the font atlas and the style (cheap when unchanged).
  void set_scale(float scale);
  float scale() const { return scale_; }

  FrameResult render(ImGuiContent* content, ImVec2 size, double delta_seconds, std::uint64_t frame_index);

 private:
  void rebuild_fonts_and_style();  // the atlas and style only; the caller uploads the font texture
  void draw_content(ImGuiContent* content, ImGuiFrame& frame, FrameResult& result);

  ImGuiContext* context_;
  bool attached_ = false;
  float scale_ = 1.0f;
  bool fonts_dirty_ = true;
};

}  // namespace rt::studio
