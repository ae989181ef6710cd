// rtorch-studio — the RustyTorch++ notebook studio. `rtorch-studio --help` lists the options (command_line.h);
// the window is the shell (shell/studio_startup.h), `--execute` the headless runner (headless_execute.h),
// `--render` a view drawn into a PNG (render_command.h).
#include <QApplication>

#include <cstdio>
#include <cstdlib>

#include "check_plugin_command.h"
#include "command_line.h"
#include "headless_execute.h"
#include "panels/builtin_panels.h"
#include "plugin_host/studio_plugins.h"
#include "shell/first_frame_probe.h"
#include "shell/main_window.h"
#include "render_command.h"
#include "shell/studio_startup.h"

int main(int argc, char** argv) {
  using namespace rt::studio;
  StudioOptions options;
  try {
    options = parse_command_line(argc, argv);
  } catch (const CommandLineExit& e) {
    std::fputs(e.what(), e.exit_code == 0 ? stdout : stderr);
    return e.exit_code;
  }
  if (options.headless()) return execute_headless(options);
  if (options.render()) return render_to_png(options, argc, argv);
  if (options.checks_plugin()) return check_panel_plugin(options, argc, argv);

  const auto set = [](const char* name) { const char* v = std::getenv(name); return v && *v; };
  if (!set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("QT_QPA_PLATFORM")) {
    std::fprintf(stderr,
                 "rtorch-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open.\n"
                 "Run a notebook without a window:  rtorch-studio --execute IN.ipynb --output OUT.ipynb\n"
                 "or use a virtual display:         xvfb-run -a rtorch-studio [NOTEBOOK.ipynb]\n");
    return 1;
  }

  QApplication app(argc, argv);
  configure_application(app);
  StudioPluginOptions plugin_options;
  plugin_options.safe_mode = options.safe_mode;
  plugin_options.noload = options.noload;
  StudioSession session(options, [&](PanelRegistry& registry) {
    register_builtin_panels(registry);
    register_plugins(registry, plugin_options);  // plugin panels dock after the built-in ones
  });
  // Plugins' delayed_initialize waits for the first painted frame, so the window shows first.
  auto* probe = new FirstFrameProbe(&session.window());
  QObject::connect(probe, &FirstFrameProbe::firstFrame, [] { run_delayed_plugin_initialization(); });
  session.start();
  return app.exec();
}
