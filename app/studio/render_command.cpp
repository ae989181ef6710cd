#include "render_command.h"

#include <QApplication>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "debugger/graph_render.h"
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
  if (!has_display()) {
    std::fprintf(stderr,
                 "rtorch-studio: --render needs an OpenGL display (DISPLAY is unset). Use a virtual one:\n"
                 "  xvfb-run -a rtorch-studio --render %s ...\n",
                 options.render_view.c_str());
    return 1;
  }
  const bool graph = options.render_view == "graph";
  RenderViewRequest request;
  request.view = options.render_view;
  request.output = options.execute_output;
  try {
    request.size = parse_size(options.render_size);
    if (options.render_trace.empty()) {
      request.source = parse_store_argument(options.render_session);
    } else {
      request.source.kind = SessionSource::Kind::Trace;
      request.source.path = options.render_trace;
    }
  } catch (const rt::Error& e) {
    std::fprintf(stderr, "rtorch-studio: %s\n", e.what());
    return 2;
  }
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen") qputenv("QT_QPA_PLATFORM", "xcb");  // offscreen has no OpenGL
  QApplication app(argc, argv);
  std::string drawn;
  try {
    if (graph) {
      const GraphRenderSummary g =
          render_graph_png({.source = request.source, .output = request.output, .size = request.size});
      drawn = ": the graph of backward #" + std::to_string(g.backward_index) + " (" +
              (g.graphs == 1 ? "the only one kept" : "the latest of " + std::to_string(g.graphs) + " kept") + "), " +
              std::to_string(g.ops) + " ops, " + std::to_string(g.shown) + " nodes shown, " +
              std::to_string(g.matched) + " ops with time and memory";
    } else {
      render_view_png(request);
    }
  } catch (const GraphLayoutError& e) {
    std::fprintf(stderr, "rtorch-studio: cannot draw graph: %s\n", e.what());
    return 1;
  } catch (const rt::Error& e) {
    std::fprintf(stderr, "rtorch-studio: %s\n", e.what());
    return 2;
  } catch (const ImGuiHostError& e) {
    std::fprintf(stderr, "rtorch-studio: cannot draw %s: %s\n", request.view.c_str(), e.what());
    return 1;
  }
  std::printf("rtorch-studio: wrote %s (%s, %dx%d)%s\n", request.output.string().c_str(),
              describe(request.source).c_str(), request.size.width(), request.size.height(), drawn.c_str());
  return 0;
}

}  // namespace rt::studio
