// imgui_host/offscreen_render.h — draws an ImGuiContent into a QImage without a window, for reports and
// `rtorch-studio --render VIEW --output PNG`.
//
//   OffscreenRenderOptions options;
//   options.size = QSize(1200, 500);            // logical pixels
//   options.scale = 2.0;                         // the image is 2400x1000, fonts and sizes doubled
//   QImage image = rt::studio::render_to_image(timeline_content, options);
//   image.save("timeline.png");
//
// Contracts:
// - Runs on the GUI thread of a QGuiApplication whose platform offers OpenGL (xcb under `xvfb-run -a`, or a real
//   display; the `offscreen` platform does not). Creates and destroys its own OpenGL 3 context, offscreen surface,
//   framebuffer object and ImGui context; the current OpenGL and ImGui contexts are restored afterwards.
// - Draws options.frames frames (ImGui lays out new windows, tables and auto-sized items over the first frames)
//   and returns the last one, as QImage::Format_RGBA8888 of size options.size * options.scale with that
//   devicePixelRatio. There is no mouse.
// - Throws ImGuiHostError with the reason when no usable context can be made (see gl_support.h), on bad options,
//   and when the content's draw() throws (with its message).
#pragma once
#include <QImage>
#include <QSize>

#include <string>

#include "imgui_host/imgui_content.h"
#include "imgui_host/ui_font.h"

namespace rt::studio {

struct OffscreenRenderOptions {
  QSize size{800, 600};  // logical pixels; both at least 1 and at most 16384 device pixels
  double scale = 1.0;    // device pixels per logical pixel (> 0)
  int frames = 3;        // >= 1
  double frame_seconds = 1.0 / 60.0;  // ImGuiFrame::delta_seconds of every frame
  std::string font_file = kDefaultUiFontPath;  // see ImGuiCanvas::set_font_file (empty: the built-in font)
};

QImage render_to_image(ImGuiContent& content, const OffscreenRenderOptions& options);

}  // namespace rt::studio
