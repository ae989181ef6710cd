#include "imgui_host/offscreen_render.h"

#include <QGuiApplication>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>

#include <cmath>
#include <memory>
#include <string>

#include "imgui_host/gl_support.h"
#include "imgui_host/imgui_canvas.h"

namespace rt::studio {

namespace {

constexpr int kMaxImageSide = 16384;

// Restores the OpenGL context (and its surface) that was current before the render.
class CurrentGlContextScope {
 public:
  CurrentGlContextScope()
      : context_(QOpenGLContext::currentContext()), surface_(context_ ? context_->surface() : nullptr) {}
  ~CurrentGlContextScope() {
    if (context_ && surface_)
      context_->makeCurrent(surface_);
  }

 private:
  QOpenGLContext* context_;
  QSurface* surface_;
};

QSize device_size(const OffscreenRenderOptions& options) {
  if (!(options.scale > 0.0) || !std::isfinite(options.scale))
    throw ImGuiHostError("render_to_image: scale must be a positive number, got " + std::to_string(options.scale));
  if (options.frames < 1)
    throw ImGuiHostError("render_to_image: frames must be at least 1, got " + std::to_string(options.frames));
  const QSize size(static_cast<int>(std::lround(options.size.width() * options.scale)),
                   static_cast<int>(std::lround(options.size.height() * options.scale)));
  if (size.width() < 1 || size.height() < 1 || size.width() > kMaxImageSide || size.height() > kMaxImageSide)
    throw ImGuiHostError("render_to_image: the image would be " + std::to_string(size.width()) + "x" +
                         std::to_string(size.height()) + " device pixels; each side must be within 1.." +
                         std::to_string(kMaxImageSide));
  return size;
}

}  // namespace

QImage render_to_image(ImGuiContent& content, const OffscreenRenderOptions& options) {
  const QSize size = device_size(options);
  CurrentGlContextScope restore_gl;

  QOpenGLContext context;
  context.setFormat(imgui_surface_format());
  if (!context.create())
    throw ImGuiHostError("render_to_image: cannot create an OpenGL context (the Qt platform '" +
                         QGuiApplication::platformName().toStdString() +
                         "' may not offer OpenGL; run under a display or `xvfb-run -a`)");
  QOffscreenSurface surface;
  surface.setFormat(context.format());
  surface.create();
  if (!surface.isValid()) throw ImGuiHostError("render_to_image: cannot create an offscreen surface");
  if (!context.makeCurrent(&surface)) throw ImGuiHostError("render_to_image: cannot make the OpenGL context current");

  QImage image;
  {
    ImGuiCanvas canvas;
    canvas.set_scale(static_cast<float>(options.scale));
    canvas.set_font_file(options.font_file);
    canvas.attach_gl(gl_support(context));  // throws with the reason when the context is unusable
    {
      QOpenGLFramebufferObject fbo(size);
      if (!fbo.isValid() || !fbo.bind()) {
        canvas.detach_gl();
        throw ImGuiHostError("render_to_image: cannot create a " + std::to_string(size.width()) + "x" +
                             std::to_string(size.height()) + " framebuffer object");
      }
      std::string error;
      for (int frame = 0; frame < options.frames; ++frame) {
        const FrameResult result =
            canvas.render(&content, ImVec2(static_cast<float>(size.width()), static_cast<float>(size.height())),
                          options.frame_seconds, static_cast<std::uint64_t>(frame));
        if (!result.content_error.empty()) error = result.content_error;
      }
      if (!error.empty()) {
        fbo.release();
        canvas.detach_gl();
        throw ImGuiHostError("render_to_image: the content's draw() threw: " + error);
      }
      image = fbo.toImage(true).convertToFormat(QImage::Format_RGBA8888);
      fbo.release();
    }
    canvas.detach_gl();
  }
  context.doneCurrent();
  image.setDevicePixelRatio(options.scale);
  return image;
}

}  // namespace rt::studio
