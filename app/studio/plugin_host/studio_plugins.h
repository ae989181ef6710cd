// plugin_host/studio_plugins.h — the studio's plugins: loaded at start, panels docked, the Plugins dialog.
//
//   // app/studio/main.cpp, while the panels are registered (before the window exists):
//   StudioPluginOptions po;
//   po.safe_mode = options.safe_mode;          // --safe-mode
//   po.noload = options.noload;                // --noload ID
//   register_plugins(registry, po);
//   // once the window has painted its first frame:
//   run_delayed_plugin_initialization();
//
// register_plugins, in order:
//  1. crash markers left by a studio that died inside a plugin (rt/plugin_host/crash_marker.h): for each,
//     po.ask_to_disable (by default a question box naming the plugin and what it was doing) and, on yes,
//     the plugin is disabled in the user's settings; the marker is then forgotten;
//  2. the user's settings (rt/plugin_host/plugin_settings.h), --safe-mode and --noload go into
//     process_plugins()'s options; the plugins are discovered, loaded and initialized (every kind:
//     ops, importers, exporters and panels), then extensions_initialized runs;
//  3. each panel plugin is checked against this studio's panel SDK (panel_compat.h); a compatible one becomes a
//     dock ("plugin-<panel id>"), an incompatible one is marked Failed with the reason;
//  4. Help > About Plugins… opens the Plugins dialog (plugins_dialog.h).
// Nothing a plugin does stops the studio: failures end up in the dialog.
#pragma once
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "rt/plugin_host/crash_marker.h"

namespace rt::studio {

class PanelRegistry;

struct StudioPluginOptions {
  bool safe_mode = false;
  std::set<std::string> noload;
  std::vector<std::filesystem::path> search_paths;  // empty: rt::plugin::default_search_paths()
  // Whether to disable a plugin that crashed the last run; empty: ask with a question box.
  std::function<bool(const plugin::CrashRecord&)> ask_to_disable;
};

void register_plugins(PanelRegistry& registry, const StudioPluginOptions& options);
void run_delayed_plugin_initialization();

}  // namespace rt::studio
