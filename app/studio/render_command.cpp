#include "render_command.h"

#include <QApplication>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "imgui_host/imgui_canvas.h"
#include "rt/error.h"
#include "viz_panels/render_view.h"

namespace rt::studio {

namespace {

bool has_display() {
  const auto set = [](const char* name) { const char* v = std::getenv(name); return v && *v; };
  return set("DISPLAY") || set("WAYLAND_DISPLAY");
}

}  // namespace

int render_to_png(const StudioOptions& options, int argc, char** argv) {
  if (options.render_view == "graph") {
    std::fprintf(stderr,
                 "rtorch-studio: --render graph: profiler stores and traces keep no autograd graph, so the graph "
                 "cannot be drawn from one yet.\nOpen the studio's Graph panel (View > Panels > Graph) while a "
                 "backward runs under the debugger, or use rustytorch.debug.graph(loss) in a script.\n");
    return 2;
  }
  if (!has_display()) {
    std::fprintf(stderr,
                 "rtorch-studio: --render needs an OpenGL display (DISPLAY is unset). Use a virtual one:\n"
                 "  xvfb-run -a rtorch-studio --render %s ...\n",
                 options.render_view.c_str());
    return 1;
  }
  RenderViewRequest request;
  request.view = options.render_view;
  request.output = options.execute_output;
  try {
    request.size = parse_size(options.render_size);
    request.source = options.render_trace.empty()
                         ? parse_store_argument(options.render_session)
                         : SessionSource{.kind = SessionSource::Kind::Trace, .path = options.render_trace};
  } catch (const rt::Error& e) {
    std::fprintf(stderr, "rtorch-studio: %s\n", e.what());
    return 2;
  }
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen") qputenv("QT_QPA_PLATFORM", "xcb");  // offscreen has no OpenGL
  QApplication app(argc, argv);
  try {
    render_view_png(request);
  } catch (const rt::Error& e) {
    std::fprintf(stderr, "rtorch-studio: %s\n", e.what());
    return 2;
  } catch (const ImGuiHostError& e) {
    std::fprintf(stderr, "rtorch-studio: cannot draw %s: %s\n", request.view.c_str(), e.what());
    return 1;
  }
  std::printf("rtorch-studio: wrote %s (%s, %dx%d)\n", request.output.string().c_str(), describe(request.source).c_str(),
              request.size.width(), request.size.height());
  return 0;
}

}  // namespace rt::studio
