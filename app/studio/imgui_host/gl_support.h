// imgui_host/gl_support.h — which OpenGL the ImGui host asks for, and whether a context it got will do.
//
//   widget->setFormat(rt::studio::imgui_surface_format());
//   ...
//   const GlSupport gl = rt::studio::gl_support(*QOpenGLContext::currentContext());
//   if (!gl.usable()) show(gl.problem);                       // says what the display offers and what is needed
//   else ImGui_ImplOpenGL3_Init(gl.glsl_version.c_str());     // "#version 330 core" on a 3.3+ core context
//
// The OpenGL 3 backend of Debian's libimgui (1.86) loads desktop OpenGL through libGL, and needs OpenGL 3.0 or newer
// (vertex array objects, GLSL 1.30). OpenGL ES contexts are refused.
#pragma once
#include <QSurfaceFormat>

#include <string>

class QOpenGLContext;

namespace rt::studio {

struct GlSupport {
  std::string glsl_version;  // the #version line for ImGui_ImplOpenGL3_Init; empty when unusable
  std::string problem;       // why the context is unusable, for the user; empty when usable
  bool usable() const { return problem.empty(); }
};

// OpenGL 3.3 core profile, no depth or stencil buffer, no multisampling.
QSurfaceFormat imgui_surface_format();

// Decides from a context's version, profile and kind; `description` (version and renderer strings) goes into
// the problem text.
GlSupport gl_support(int major, int minor, bool is_es, bool core_profile, const std::string& description);
// The same for a created context (it need not be current).
GlSupport gl_support(const QOpenGLContext& context);

}  // namespace rt::studio
