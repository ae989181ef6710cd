#include "viz_panels/render_view.h"

#include <fmt/format.h>

#include <charconv>

#include "imgui_host/offscreen_render.h"
#include "rt/error.h"
#include "viz_panels/session_view_content.h"

namespace rt::studio {

QSize parse_size(std::string_view text) {
  const size_t x = text.find('x');
  int w = 0, h = 0;
  const auto parse = [](std::string_view s, int& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
  };
  if (x == std::string_view::npos || !parse(text.substr(0, x), w) || !parse(text.substr(x + 1), h))
    throw rt::ValueError(fmt::format("size '{}' is not WIDTHxHEIGHT (e.g. 1600x900)", text));
  return {w, h};
}

QImage render_view_image(const RenderViewRequest& r) {
  const VizView view = parse_view(r.view);
  if (r.size.width() < 64 || r.size.height() < 64 || r.size.width() > 16384 || r.size.height() > 16384)
    throw rt::ValueError(fmt::format("size {}x{} is out of range: each side must be 64..16384 pixels",
                                     r.size.width(), r.size.height()));
  auto data = load_session(r.source);
  SessionViewContent content(view, {std::move(data)}, std::make_shared<viz::draw::TimeCursor>());
  OffscreenRenderOptions options;
  options.size = r.size;
  options.scale = r.scale;
  options.frames = 4;  // toolbar widgets and child windows settle over the first frames
  return render_to_image(content, options);
}

void render_view_png(const RenderViewRequest& r) {
  if (r.output.empty()) throw rt::ValueError("no output PNG path given (--output FILE.png)");
  const QImage image = render_view_image(r);
  if (!image.save(QString::fromStdString(r.output.string()), "PNG"))
    throw rt::Error(fmt::format("cannot write '{}' (does its folder exist and is it writable?)", r.output.string()));
}

}  // namespace rt::studio
