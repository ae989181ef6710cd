#include "imgui_host/imgui_canvas.h"

#include <imgui_internal.h>
#include <backends/imgui_impl_opengl3.h>

#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QtGlobal>

#include <algorithm>
#include <utility>

namespace rt::studio {

namespace {

// No background: submit_frame clears the framebuffer to the window background color already, and a second
// full-window quad costs a software rasteriser (Mesa's llvmpipe) as much as everything a view draws.
constexpr ImGuiWindowFlags kHostWindowFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                              ImGuiWindowFlags_NoSavedSettings |
                                              ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoBackground;

}  // namespace

ImGuiCanvas::ImGuiCanvas() {
  ImGuiContext* previous = ImGui::GetCurrentContext();
  context_ = ImGui::CreateContext();  // makes itself current when none was
  ImGui::SetCurrentContext(previous);
  ImGuiContextScope scope(context_);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // hosts keep no imgui.ini in the working directory
  io.LogFilename = nullptr;
  // A blinking cursor would need frames while nothing happens; the host draws only on demand.
  io.ConfigInputTextCursorBlink = false;
}

ImGuiCanvas::~ImGuiCanvas() {
  if (attached_) qWarning("ImGuiCanvas destroyed while attached to an OpenGL context: its GL objects leak");
  ImGui::DestroyContext(context_);  // clears the current context only when it was this one
}

void ImGuiCanvas::attach_gl(const GlSupport& gl) {
  if (attached_) throw ImGuiHostError("ImGuiCanvas::attach_gl: already attached to an OpenGL context");
  if (!gl.usable()) throw ImGuiHostError(gl.problem);
  ImGuiContextScope scope(context_);
  if (!ImGui_ImplOpenGL3_Init(gl.glsl_version.c_str()))
    throw ImGuiHostError("The ImGui OpenGL 3 backend could not load the OpenGL functions from libGL (GLSL '" +
                         gl.glsl_version + "').");
  attached_ = true;
  if (fonts_dirty_) rebuild_fonts_and_style();
  ImGui_ImplOpenGL3_CreateDeviceObjects();  // shaders, buffers and the font texture
}

void ImGuiCanvas::detach_gl() {
  if (!attached_) return;
  ImGuiContextScope scope(context_);
  ImGui_ImplOpenGL3_Shutdown();
  attached_ = false;
}

void ImGuiCanvas::set_scale(float scale) {
  if (!(scale > 0.0f)) throw ImGuiHostError("ImGuiCanvas::set_scale: scale must be positive, got " +
                                            std::to_string(scale));
  if (scale == scale_ && !fonts_dirty_) return;
  scale_ = scale;
  fonts_dirty_ = true;
  rebuild_fonts_if_attached();
}

void ImGuiCanvas::set_font_file(std::string path) {
  if (path == font_file_ && !fonts_dirty_) return;
  font_file_ = std::move(path);
  fonts_dirty_ = true;
  rebuild_fonts_if_attached();
}

void ImGuiCanvas::rebuild_fonts_if_attached() {
  if (!attached_) return;
  ImGuiContextScope scope(context_);
  rebuild_fonts_and_style();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
}

void ImGuiCanvas::rebuild_fonts_and_style() {
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  font_ = add_ui_font(*io.Fonts, scale_, font_file_);
  if (!font_.problem.empty() && font_.problem != warned_problem_) qWarning("%s", font_.problem.c_str());
  warned_problem_ = font_.problem;
  ImGuiStyle style;
  ImGui::StyleColorsDark(&style);
  style.ScaleAllSizes(scale_);
  ImGui::GetStyle() = style;
  fonts_dirty_ = false;
}

FrameResult ImGuiCanvas::render(ImGuiContent* content, ImVec2 size, double delta_seconds, std::uint64_t frame_index) {
  FrameResult result = build_frame(content, size, delta_seconds, frame_index);
  submit_frame();
  return result;
}

FrameResult ImGuiCanvas::build_frame(ImGuiContent* content, ImVec2 size, double delta_seconds,
                                     std::uint64_t frame_index) {
  if (!attached_) throw ImGuiHostError("ImGuiCanvas::build_frame: no OpenGL context is attached");
  ImGuiContextScope scope(context_);
  if (fonts_dirty_) {
    rebuild_fonts_and_style();
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(std::max(size.x, 0.0f), std::max(size.y, 0.0f));
  io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
  io.DeltaTime = static_cast<float>(std::max(delta_seconds, 1e-5));

  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
  FrameResult result;
  ImGuiFrame frame(io.DisplaySize, scale_, delta_seconds, frame_index);
  ImGui::SetNextWindowPos(ImVec2(0.0f, 0.0f));
  ImGui::SetNextWindowSize(io.DisplaySize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0.0f, 0.0f));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
  ImGui::Begin("##rt_imgui_host", nullptr, kHostWindowFlags);
  ImGui::PopStyleVar(3);
  if (content) draw_content(content, frame, result);
  ImGui::End();
  result.cursor = ImGui::GetMouseCursor();
  result.another_frame_requested = frame.another_frame_requested();
  ImGui::Render();
  frame_built_ = true;
  return result;
}

void ImGuiCanvas::submit_frame() {
  if (!attached_) throw ImGuiHostError("ImGuiCanvas::submit_frame: no OpenGL context is attached");
  if (!frame_built_) throw ImGuiHostError("ImGuiCanvas::submit_frame: no frame was built (call build_frame first)");
  ImGuiContextScope scope(context_);
  frame_built_ = false;
  const ImGuiIO& io = ImGui::GetIO();
  QOpenGLFunctions* gl = QOpenGLContext::currentContext()->functions();
  const ImVec4 background = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  gl->glDisable(GL_SCISSOR_TEST);
  gl->glViewport(0, 0, static_cast<int>(io.DisplaySize.x), static_cast<int>(io.DisplaySize.y));
  gl->glClearColor(background.x, background.y, background.z, 1.0f);
  gl->glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void ImGuiCanvas::draw_content(ImGuiContent* content, ImGuiFrame& frame, FrameResult& result) {
  ImGuiContext& g = *context_;
  const int host_depth = g.CurrentWindowStack.Size;
  try {
    content->draw(frame);
    return;
  } catch (const std::exception& e) {
    result.content_error = e.what();
  } catch (...) {
    result.content_error = "an exception that is not a std::exception";
  }
  // Close what the content left open, as ImGui::ErrorCheckEndFrameRecover does for a whole frame.
  while (g.CurrentWindowStack.Size > host_depth) {
    ImGui::ErrorCheckEndWindowRecover(nullptr);
    if (g.CurrentWindow->Flags & ImGuiWindowFlags_ChildWindow)
      ImGui::EndChild();
    else
      ImGui::End();
  }
  ImGui::ErrorCheckEndWindowRecover(nullptr);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
  ImGui::TextWrapped("This view failed to draw: %s", result.content_error.c_str());
  ImGui::PopStyleColor();
}

}  // namespace rt::studio
