// viz_draw_bench — the DRAWN frame of the timeline and memory panels (issue 6 target: at most 16 ms with 1M
// events, zoomed out and zoomed in): rt_viz_draw's views inside the studio's ImGui canvas, on a real OpenGL
// context and framebuffer, the way the panels draw them. viz_bench times the view models alone.
//
//   xvfb-run -a -s "-screen 0 1920x1080x24" build/bin/viz_draw_bench            # 1M ops, 1M memory events
//   xvfb-run -a build/bin/viz_draw_bench --events 200000 --frames 50 --size 1600x600 --scale 2 --save /tmp/shots
//
// Per frame: "build" is ImGui's NewFrame .. Render including our draw code (CPU); "+GL" adds submitting the draw
// data to OpenGL and glFinish (without a GPU that is Mesa's llvmpipe rasterising on the CPU). Each frame shows
// the zoom's window at a random place in the session. Median and p95 over --frames frames, after 5 warm-up frames.
// "fill" is the pixels the frame's triangles cover inside their clip rectangles over the framebuffer's pixels
// (the most of any frame): what a software rasteriser pays for. --save DIR writes the last frame of each case as a PNG, to check that the benchmark draws what the panels do.
// Before Qt's headers: the generated-session fixture names a lambda `emit`, which Qt defines as a macro.
#include "test_timeline_fixtures.h"

#include <QDir>
#include <QGuiApplication>
#include <QImage>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFramebufferObject>
#include <QOpenGLFunctions>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "imgui_host/gl_support.h"
#include "imgui_host/imgui_canvas.h"
#include "rt/viz/draw/memory_draw.h"
#include "rt/viz/draw/timeline_draw.h"

namespace {

using Clock = std::chrono::steady_clock;
using rt::studio::ImGuiCanvas;
using rt::studio::ImGuiContent;
using rt::studio::ImGuiFrame;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Options {
  size_t events = 1'000'000;
  int frames = 200;
  int width = 1920;
  int height = 1080;
  double scale = 1.0;
  std::string save_dir;
};

// Draws one view into the whole canvas, as SessionViewContent does for the panels.
class ViewContent final : public ImGuiContent {
 public:
  explicit ViewContent(std::function<void(ImVec2, float)> draw) : draw_(std::move(draw)) {}
  void draw(ImGuiFrame& frame) override { draw_(frame.size(), frame.scale()); }

 private:
  std::function<void(ImVec2, float)> draw_;
};

struct Case {
  std::string view;
  std::string zoom;
  std::vector<double> build_ms, total_ms;
  int vertices = 0;
  int commands = 0;
  double fill = 0;
};

// Pixels the frame's triangles cover inside their clip rectangles (what the rasteriser shades), over the
// framebuffer's pixels: 1.0 is every pixel once.
double fill_factor(const ImDrawData& data, float width, float height) {
  auto clip = [](std::vector<ImVec2>& poly, auto inside, auto cross) {
    std::vector<ImVec2> out;
    for (size_t i = 0; i < poly.size(); ++i) {
      const ImVec2 a = poly[i], b = poly[(i + 1) % poly.size()];
      if (inside(a)) out.push_back(a);
      if (inside(a) != inside(b)) out.push_back(cross(a, b));
    }
    poly.swap(out);
  };
  double covered = 0;
  std::vector<ImVec2> poly;
  for (int l = 0; l < data.CmdListsCount; ++l) {
    const ImDrawList& list = *data.CmdLists[l];
    for (const ImDrawCmd& cmd : list.CmdBuffer) {
      if (cmd.UserCallback) continue;
      const ImVec4 r = cmd.ClipRect;
      for (unsigned int i = 0; i + 2 < cmd.ElemCount; i += 3) {
        poly.clear();
        for (unsigned int k = 0; k < 3; ++k) poly.push_back(list.VtxBuffer[cmd.VtxOffset + list.IdxBuffer[cmd.IdxOffset + i + k]].pos);
        auto at_x = [](float x) { return [x](ImVec2 a, ImVec2 b) { return ImVec2(x, a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x)); }; };
        auto at_y = [](float y) { return [y](ImVec2 a, ImVec2 b) { return ImVec2(a.x + (b.x - a.x) * (y - a.y) / (b.y - a.y), y); }; };
        clip(poly, [&](ImVec2 p) { return p.x >= r.x; }, at_x(r.x));
        clip(poly, [&](ImVec2 p) { return p.x <= r.z; }, at_x(r.z));
        clip(poly, [&](ImVec2 p) { return p.y >= r.y; }, at_y(r.y));
        clip(poly, [&](ImVec2 p) { return p.y <= r.w; }, at_y(r.w));
        double area = 0;
        for (size_t k = 0; k < poly.size(); ++k) {
          const ImVec2 a = poly[k], b = poly[(k + 1) % poly.size()];
          area += double(a.x) * b.y - double(b.x) * a.y;
        }
        covered += std::abs(area) * 0.5;
      }
    }
  }
  return covered / (double(width) * height);
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

class Bench {
 public:
  Bench(const Options& options, QOpenGLContext& gl) : options_(options), gl_(gl) {
    canvas_.set_scale(float(options.scale));
    canvas_.attach_gl(rt::studio::gl_support(gl));
  }
  ~Bench() { canvas_.detach_gl(); }

  const ImGuiCanvas& canvas() const { return canvas_; }

  // Draws `frames` frames of `content`; `place` moves the view to a new window before each one.
  Case run(const std::string& view, const std::string& zoom, ImGuiContent& content,
           const std::function<void(std::mt19937_64&)>& place) {
    Case c{view, zoom, {}, {}, 0, 0, 0};
    const ImVec2 size(float(fbo_size().width()), float(fbo_size().height()));
    QOpenGLFramebufferObject fbo(fbo_size());
    if (!fbo.isValid() || !fbo.bind()) throw std::runtime_error("cannot create the framebuffer object");
    QOpenGLFunctions* f = gl_.functions();
    std::mt19937_64 rng(7);
    constexpr int kWarmup = 5;
    for (int i = 0; i < kWarmup + options_.frames; ++i) {
      place(rng);
      const auto t0 = Clock::now();
      const rt::studio::FrameResult r = canvas_.build_frame(&content, size, 1.0 / 60, uint64_t(index_++));
      const auto t1 = Clock::now();
      canvas_.submit_frame();
      f->glFinish();
      const auto t2 = Clock::now();
      if (!r.content_error.empty()) throw std::runtime_error(view + " failed to draw: " + r.content_error);
      if (i < kWarmup) continue;
      c.build_ms.push_back(ms_between(t0, t1));
      c.total_ms.push_back(ms_between(t0, t2));
      rt::studio::ImGuiContextScope scope(canvas_.context());
      const ImDrawData* data = ImGui::GetDrawData();
      c.vertices = std::max(c.vertices, data->TotalVtxCount);
      int commands = 0;
      for (int l = 0; l < data->CmdListsCount; ++l) commands += data->CmdLists[l]->CmdBuffer.Size;
      c.commands = std::max(c.commands, commands);
      c.fill = std::max(c.fill, fill_factor(*data, size.x, size.y));
    }
    if (!options_.save_dir.empty()) {
      QDir().mkpath(QString::fromStdString(options_.save_dir));
      const QString file = QString::fromStdString(options_.save_dir + "/draw-bench-" + view + "-" + zoom + ".png");
      if (!fbo.toImage(true).save(file)) std::fprintf(stderr, "cannot write %s\n", qPrintable(file));
    }
    fbo.release();
    return c;
  }

 private:
  QSize fbo_size() const {
    return QSize(int(options_.width * options_.scale + 0.5), int(options_.height * options_.scale + 0.5));
  }

  Options options_;
  QOpenGLContext& gl_;
  ImGuiCanvas canvas_;
  int index_ = 0;
};

// A window of 1/zoom of [first, last] at a random place.
void random_window(std::mt19937_64& rng, int64_t first, int64_t last, double zoom,
                   const std::function<void(int64_t, int64_t)>& set_window) {
  const int64_t extent = last - first;
  const auto span = std::max<int64_t>(1000, int64_t(double(extent) / zoom));
  const int64_t room = std::max<int64_t>(0, extent - span);
  const int64_t t0 = first + (room > 0 ? int64_t(rng() % uint64_t(room)) : 0);
  set_window(t0, t0 + span);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--events") && has_value) o.events = std::stoul(argv[++i]);
    else if (!std::strcmp(argv[i], "--frames") && has_value) o.frames = std::max(1, std::stoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--scale") && has_value) o.scale = std::stod(argv[++i]);
    else if (!std::strcmp(argv[i], "--save") && has_value) o.save_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--size") && has_value &&
             std::sscanf(argv[++i], "%dx%d", &o.width, &o.height) == 2 && o.width > 0 && o.height > 0) {
    } else {
      std::fprintf(stderr,
                   "usage: viz_draw_bench [--events N] [--frames F] [--size WxH] [--scale S] [--save DIR]\n"
                   "  run it where OpenGL windows exist: on a display or under `xvfb-run -a`\n");
      std::exit(2);
    }
  }
  if (!(o.scale > 0)) {
    std::fprintf(stderr, "viz_draw_bench: --scale must be positive\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  QGuiApplication app(argc, argv);
  QOpenGLContext gl;
  gl.setFormat(rt::studio::imgui_surface_format());
  QOffscreenSurface surface;
  if (!gl.create()) {
    std::fprintf(stderr, "viz_draw_bench: cannot create an OpenGL context on the Qt platform '%s'; run it on a "
                         "display or under `xvfb-run -a`\n", qPrintable(QGuiApplication::platformName()));
    return 1;
  }
  surface.setFormat(gl.format());
  surface.create();
  if (!gl.makeCurrent(&surface)) {
    std::fprintf(stderr, "viz_draw_bench: cannot make the OpenGL context current\n");
    return 1;
  }
  const auto* renderer = reinterpret_cast<const char*>(gl.functions()->glGetString(GL_RENDERER));
  std::printf("OpenGL: %s; %dx%d device pixels (scale %.1f), %d frames per case\n", renderer ? renderer : "?",
              int(options.width * options.scale + 0.5), int(options.height * options.scale + 0.5), options.scale,
              options.frames);

  auto t = Clock::now();
  const auto ops = rt::viz::fixtures::generate_session({.ops = options.events, .threads = 2, .max_depth = 6, .seed = 1});
  const auto memory =
      std::make_shared<const rt::prof::SessionData>(rt::viz::fixtures::generate_memory(options.events, 2, false));
  std::printf("sessions: %zu ops + %zu GPU activities; %zu memory events (generated in %.0f ms)\n", ops->ops.size(),
              ops->gpu.size(), memory->memory.size(), ms_between(t, Clock::now()));

  std::vector<Case> cases;
  try {
    Bench bench(options, gl);
    std::printf("font: %s\n", bench.canvas().font().font ? bench.canvas().font().font->GetDebugName() : "?");
    {
      // What every frame pays whatever it shows: ImGui's frame, clearing and presenting the framebuffer.
      ViewContent empty([](ImVec2, float) {});
      cases.push_back(bench.run("empty", "-", empty, [](std::mt19937_64&) {}));
    }
    {
      t = Clock::now();
      rt::viz::draw::TimelineDraw timeline(ops);
      std::printf("timeline view built in %.0f ms (%zu events)\n", ms_between(t, Clock::now()),
                  timeline.model().event_count());
      ViewContent content([&](ImVec2 size, float scale) { timeline.draw(size, scale); });
      const int64_t first = timeline.model().first_ns(), last = timeline.model().last_ns();
      for (const auto& [name, zoom] : {std::pair{"zoomed-out", 1.0}, {"zoomed-in-100x", 100.0}, {"zoomed-in-1e5x", 1e5}})
        cases.push_back(bench.run("timeline", name, content, [&, zoom = zoom](std::mt19937_64& rng) {
          random_window(rng, first, last, zoom, [&](int64_t t0, int64_t t1) { timeline.set_window(t0, t1); });
        }));
    }
    {
      t = Clock::now();
      rt::viz::draw::MemoryDraw view(memory);
      std::printf("memory view built in %.0f ms (%zu blocks)\n", ms_between(t, Clock::now()),
                  view.model().blocks().size());
      ViewContent content([&](ImVec2 size, float scale) { view.draw(size, scale); });
      view.fit_all();
      const int64_t first = view.view().t0(), last = view.view().t1();
      for (const auto& [name, zoom] : {std::pair{"zoomed-out", 1.0}, {"zoomed-in-100x", 100.0}})
        cases.push_back(bench.run("memory", name, content, [&, zoom = zoom](std::mt19937_64& rng) {
          random_window(rng, first, last, zoom, [&](int64_t t0, int64_t t1) { view.set_window(t0, t1); });
        }));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "viz_draw_bench: %s\n", e.what());
    return 1;
  }
  gl.doneCurrent();

  std::printf("\n| %-8s | %-14s | %12s | %12s | %12s | %12s | %8s | %6s | %6s |\n", "view", "zoom", "build median",
              "build p95", "+GL median", "+GL p95", "vertices", "draws", "fill");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(10, '-').c_str(), std::string(16, '-').c_str(),
              std::string(14, '-').c_str(), std::string(14, '-').c_str(), std::string(14, '-').c_str(),
              std::string(14, '-').c_str(), std::string(10, '-').c_str(), std::string(8, '-').c_str(),
              std::string(8, '-').c_str());
  bool over = false;
  for (const Case& c : cases) {
    const double total_p95 = percentile(c.total_ms, 0.95);
    over = over || total_p95 > 16.0;
    std::printf("| %-8s | %-14s | %9.2f ms | %9.2f ms | %9.2f ms | %9.2f ms | %8d | %6d | %5.2fx |\n", c.view.c_str(),
                c.zoom.c_str(), percentile(c.build_ms, 0.5), percentile(c.build_ms, 0.95), percentile(c.total_ms, 0.5),
                total_p95, c.vertices, c.commands, c.fill);
  }
  std::printf("\ntarget: a frame (+GL) within 16 ms: %s\n", over ? "MISSED by at least one case (p95)" : "met (p95)");
  return 0;
}
