// viz_panels/render_view.h — draws one visualizer view of a session into a PNG without a window, for
// `rtorch-studio --render VIEW --session DB[:N] | --trace FILE --output PNG [--size WxH]` and reports.
//
//   RenderViewRequest r;
//   r.view = "memory";
//   r.source = parse_store_argument("runs.sqlite:3");   // or {.kind = SessionSource::Kind::Trace, .path = f}
//   r.output = "memory.png";
//   r.size = QSize(1600, 900);
//   render_view_png(r);                                  // needs a QGuiApplication with OpenGL (xcb / xvfb-run)
//
// Contracts
// - Throws rt::ValueError before drawing anything for an unknown view, a bad size (each side 64..16384), an
//   empty output path, or a session that cannot be loaded (see load_session: missing file, missing session
//   naming `rtorch trace list`, unreadable trace). Throws rt::Error when the output cannot be written
//   (naming the path), and ImGuiHostError when no OpenGL context can be made.
// - The view is drawn as the panel draws it at startup: the whole session in the window, nothing selected.
//   parse_size accepts "WxH".
#pragma once
#include <QImage>
#include <QSize>

#include <filesystem>
#include <string>
#include <string_view>

#include "viz_panels/session_source.h"

namespace rt::studio {

struct RenderViewRequest {
  std::string view;            // timeline | memory | scalars
  SessionSource source;
  std::filesystem::path output;
  QSize size{1600, 900};       // logical pixels
  double scale = 1.0;
};

QSize parse_size(std::string_view text);
QImage render_view_image(const RenderViewRequest& request);  // everything but the saving
void render_view_png(const RenderViewRequest& request);

}  // namespace rt::studio
