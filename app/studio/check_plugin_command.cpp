#include "check_plugin_command.h"

#include <QApplication>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "imgui_host/offscreen_render.h"
#include "plugin_host/panel_compat.h"
#include "plugin_host/plugin_panel_content.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/session.h"
#include "rt/rt.h"

namespace rt::studio {
namespace {

constexpr int kFrames = 120;
constexpr double kBudgetMs = 8.0;  // half a 60 Hz frame: the rest is the studio's

int g_failed = 0;
void report(const char* check, bool ok, const std::string& detail) {
  if (!ok) ++g_failed;
  std::printf("  %-5s %-14s %s\n", ok ? "ok" : "FAIL", check, detail.c_str());
  std::fflush(stdout);
}

// Draws kFrames frames one by one (each a separate offscreen render of one frame, timed around the panel).
struct DrawTiming {
  std::vector<double> ms;
  std::string error;
};

// ImGuiContent that times the wrapped content's draw.
class TimedContent final : public ImGuiContent {
 public:
  explicit TimedContent(PluginPanelContent& inner) : inner_(inner) {}
  void draw(ImGuiFrame& frame) override {
    auto t0 = std::chrono::steady_clock::now();
    inner_.draw(frame);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> ms;

 private:
  PluginPanelContent& inner_;
};

void check_drawing(const char* check, PluginPanelContent& content, const std::string& what) {
  TimedContent timed(content);
  OffscreenRenderOptions o;
  o.size = QSize(900, 500);
  o.frames = kFrames;
  try {
    render_to_image(timed, o);
  } catch (const std::exception& e) {
    return report(check, false, e.what());
  }
  if (!content.error().empty()) return report(check, false, content.error());
  std::vector<double> ms = timed.ms;
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2], slowest = ms.back();
  report(check, median <= kBudgetMs,
         fmt::format("{} frames {}: median {:.2f} ms, slowest {:.2f} ms (budget {:.0f} ms median)", ms.size(), what,
                     median, slowest, kBudgetMs));
}

// A short real training recorded with its gradient histograms: what the panel is drawn with in "draw session".
std::shared_ptr<const prof::SessionData> record_sample_training(int steps) {
  rt::manual_seed(11);
  prof::SessionOptions options;
  options.name = "plugin check: MLP with gradient histograms";
  prof::Session session(options);
  session.start();
  auto net = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(16, 32),
                                                  std::make_shared<rt::nn::Tanh>(),
                                                  std::make_shared<rt::nn::Linear>(32, 4));
  rt::optim::SGD opt(net->parameters(), rt::optim::SGDOptions{.lr = 0.1});
  const rt::Tensor x = rt::randn({64, 16});
  const rt::Tensor y = rt::randint(0, 4, {64});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    rt::cross_entropy((*net)(x), y).backward();
    for (const auto& [name, p] : net->named_parameters()) prof::record_gradient_histogram(name, p.grad());
    opt.step();
    session.step();
  }
  session.stop();
  return std::make_shared<const prof::SessionData>(session.data());
}

}  // namespace

int check_panel_plugin(const StudioOptions& options, int argc, char** argv) {
  const char* display = std::getenv("DISPLAY");
  if (!display || !*display) {
    std::fprintf(stderr, "rtorch-studio: --check-plugin draws with OpenGL and needs a display (DISPLAY is unset):\n"
                         "  xvfb-run -a rtorch-studio --check-plugin %s\n",
                 options.check_plugin.c_str());
    return 1;
  }
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen") qputenv("QT_QPA_PLATFORM", "xcb");
  QApplication app(argc, argv);
  std::printf("checking %s\n", options.check_plugin.c_str());

  plugin::ManagerOptions mo;
  mo.app = "studio-check";
  plugin::PluginManager pm(mo);
  pm.discover(plugin::default_search_paths());  // for its dependencies
  plugin::PluginRecord& r = const_cast<plugin::PluginRecord&>(pm.add(options.check_plugin));
  if (r.state == plugin::PluginState::Invalid) return report("manifest", false, r.error), 1;
  if (r.state == plugin::PluginState::Disabled) r.state = plugin::PluginState::Found;
  report("manifest", true, fmt::format("{} {}", r.manifest.id, r.manifest.version.str()));
  if (!r.manifest.has_kind(plugin::Kind::Panel))
    return report("panel", false, "not a panel plugin (its kinds lack \"panel\"); check it with `rtorch plugin check`"),
           1;
  for (const plugin::Dependency& d : r.manifest.dependencies) pm.load_one(d.id);
  pm.load_one(r.manifest.id);
  if (!r.info) return report("load", false, r.error), 1;
  std::string why = panel_incompatibility(r.info->panel, r.manifest);
  if (!why.empty()) return report("load", false, why), 1;
  report("load", true, fmt::format("ABI {}.{}, panel SDK {}, Dear ImGui {}", r.info->abi_major, r.info->abi_minor,
                                   RT_PANEL_SDK_VERSION, IMGUI_VERSION_NUM));
  if (r.state != plugin::PluginState::Running) return report("initialize", false, r.error), 1;
  report("initialize", true, fmt::format("{:.1f} ms", r.initialize_ms));

  {
    PluginPanelContent content(r, "studio-check");
    check_drawing("draw", content, "without a session");
  }
  {
    const int steps = 8;
    auto data = record_sample_training(steps);
    PluginPanelContent content(r, "studio-check");
    content.set_session(data, data->name, /*live=*/false);
    check_drawing("draw-session", content,
                  fmt::format("of a recorded training ({} steps, {} gradient histograms)", steps,
                              data->gradient_histograms.size()));
  }
  pm.shutdown();
  std::printf(g_failed ? "%d checks failed\n" : "all checks passed\n", g_failed);
  return g_failed ? 1 : 0;
}

}  // namespace rt::studio
