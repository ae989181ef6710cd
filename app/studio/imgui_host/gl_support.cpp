#include "imgui_host/gl_support.h"

#include <QOpenGLContext>
#include <QOpenGLFunctions>

namespace rt::studio {

QSurfaceFormat imgui_surface_format() {
  QSurfaceFormat format;
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 3);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(0);
  format.setStencilBufferSize(0);
  format.setSamples(0);
  return format;
}

GlSupport gl_support(int major, int minor, bool is_es, bool core_profile, const std::string& description) {
  GlSupport result;
  if (is_es) {
    result.problem = "The ImGui views need desktop OpenGL 3.0 or newer, but this display offers only " + description +
                     " (OpenGL ES is not supported by the ImGui OpenGL 3 backend).";
    return result;
  }
  if (major < 3) {
    result.problem = "The ImGui views need OpenGL 3.0 or newer, but this display offers only " + description +
                     ". Install a current GPU driver, or Mesa's software renderer (libgl1-mesa-dri).";
    return result;
  }
  if (major == 3 && minor == 0)
    result.glsl_version = "#version 130";
  else if (major == 3 && minor == 1)
    result.glsl_version = "#version 140";
  else if (major == 3 && minor == 2)
    result.glsl_version = "#version 150";
  else
    result.glsl_version = core_profile ? "#version 330 core" : "#version 330";
  return result;
}

GlSupport gl_support(const QOpenGLContext& context) {
  const QSurfaceFormat format = context.format();
  const bool core = format.profile() == QSurfaceFormat::CoreProfile;
  std::string description = (context.isOpenGLES() ? "OpenGL ES " : "OpenGL ") + std::to_string(format.majorVersion()) +
                            "." + std::to_string(format.minorVersion());
  if (!context.isOpenGLES() && (format.majorVersion() > 3 || (format.majorVersion() == 3 && format.minorVersion() >= 2)))
    description += core ? " core profile" : " compatibility profile";
  if (QOpenGLContext::currentContext() == &context) {
    const auto* renderer = reinterpret_cast<const char*>(context.functions()->glGetString(GL_RENDERER));
    if (renderer) description += std::string(" (renderer ") + renderer + ")";
  }
  return gl_support(format.majorVersion(), format.minorVersion(), context.isOpenGLES(), core, description);
}

}  // namespace rt::studio
