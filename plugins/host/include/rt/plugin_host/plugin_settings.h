// rt/plugin_host/plugin_settings.h — which plugins the user switched off (or on), kept between runs.
//
//   rt::plugin::PluginSettings s = rt::plugin::PluginSettings::load();
//   s.disable("org.example.panel");     // the Plugins dialog's checkbox, or "disable it?" after a crash
//   s.save();
//   rt::plugin::ManagerOptions o = s.manager_options();
//
// The file is $XDG_CONFIG_HOME/rustytorch/plugins.json (~/.config/rustytorch/plugins.json):
//   {"disabled": ["org.example.panel"], "enabled": ["org.example.off-by-default"]}
// A missing file is empty settings; a malformed one is reported (std::runtime_error naming it) and not
// overwritten.
#pragma once
#include <filesystem>
#include <set>
#include <string>

#include "rt/plugin_host/plugin_manager.h"

namespace rt::plugin {

struct PluginSettings {
  std::set<std::string> disabled;  // off although enabled by default
  std::set<std::string> enabled;   // on although off by default

  static std::filesystem::path file();
  static PluginSettings load();
  void save() const;  // atomically (write then rename)
  void disable(const std::string& id);
  void enable(const std::string& id);
  ManagerOptions manager_options() const;
};

}  // namespace rt::plugin
