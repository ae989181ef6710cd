// imgui_host/imgui_canvas.h — one Dear ImGui context and, while attached to an OpenGL context, its OpenGL 3
// renderer. ImGuiHostWidget and render_to_image draw through it; panels never use it directly.
//
//   ImGuiCanvas canvas;                         // creates the ImGui context (not current afterwards)
//   gl_context.makeCurrent(surface);
//   canvas.attach_gl(gl_support(gl_context));   // throws ImGuiHostError when the backend cannot start
//   canvas.set_scale(2.0f);                     // DejaVu Sans rasterised at 28 px, style sizes doubled
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
// - Fonts: the UI font (ui_font.h: DejaVu Sans, else the built-in ProggyClean with one qWarning naming the
//   problem) at the scaled size; font() says which one the atlas holds.
#pragma once
#include <imgui.h>

#include <stdexcept>
#include <string>

#include "imgui_host/gl_support.h"
#include "imgui_host/imgui_content.h"
#include "imgui_host/ui_font.h"

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

  // The TrueType file of the UI font (default kDefaultUiFontPath; empty: the built-in font). A change
  // rebuilds the font atlas like set_scale does.
  void set_font_file(std::string path);
  const std::string& font_file() const { return font_file_; }
  // The font of the current atlas; its `font` is null until the first attach_gl or render.
  const UiFont& font() const { return font_; }

  FrameResult render(ImGuiContent* content, ImVec2 size, double delta_seconds, std::uint64_t frame_index);

  // The two halves of render(), for a host that times them (bench/viz/viz_draw_bench.cpp): build_frame runs
  // ImGui's NewFrame .. Render with the content's draw() and touches no framebuffer; submit_frame clears the
  // bound framebuffer and issues the OpenGL calls of the frame build_frame made. Call them in that order, once
  // each per frame, with the attached GL context current. Both throw ImGuiHostError when detached, and
  // submit_frame also when no frame was built since the last submit.
  FrameResult build_frame(ImGuiContent* content, ImVec2 size, double delta_seconds, std::uint64_t frame_index);
  void submit_frame();

 private:
  void rebuild_fonts_and_style();  // the atlas and style only; the caller uploads the font texture
  void rebuild_fonts_if_attached();  // and uploads the texture
  void draw_content(ImGuiContent* content, ImGuiFrame& frame, FrameResult& result);

  ImGuiContext* context_;
  bool attached_ = false;
  float scale_ = 1.0f;
  std::string font_file_ = kDefaultUiFontPath;
  UiFont font_;
  std::string warned_problem_;  // the last font problem reported, so each is reported once
  bool fonts_dirty_ = true;
  bool frame_built_ = false;  // build_frame ran and submit_frame did not yet
};

}  // namespace rt::studio
