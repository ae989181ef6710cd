#include "rt/plugin_host/plugin_settings.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

namespace rt::plugin {

std::filesystem::path PluginSettings::file() {
  if (const char* d = std::getenv("XDG_CONFIG_HOME"); d && *d)
    return std::filesystem::path(d) / "rustytorch" / "plugins.json";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".config" / "rustytorch" / "plugins.json";
}

PluginSettings PluginSettings::load() {
  PluginSettings s;
  std::filesystem::path f = file();
  std::ifstream in(f);
  if (!in) return s;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto read_ids = [&](const char* key, std::set<std::string>& into) {
    if (!j.contains(key)) return;
    if (!j[key].is_array())
      throw std::runtime_error(fmt::format("{}: \"{}\" must be a list of plugin ids; fix or delete the file",
                                           f.string(), key));
    for (const auto& id : j[key]) {
      if (!id.is_string())
        throw std::runtime_error(fmt::format("{}: \"{}\" holds a {}; list plugin ids as strings", f.string(), key,
                                             id.type_name()));
      into.insert(id.get<std::string>());
    }
  };
  if (!j.is_object())
    throw std::runtime_error(fmt::format("{} is not a JSON object; fix or delete the file (it lists disabled plugins)",
                                         f.string()));
  read_ids("disabled", s.disabled);
  read_ids("enabled", s.enabled);
  return s;
}

void PluginSettings::save() const {
  std::filesystem::path f = file();
  std::filesystem::create_directories(f.parent_path());
  nlohmann::json j = {{"disabled", disabled}, {"enabled", enabled}};
  std::filesystem::path tmp = f;
  tmp += fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!(out << j.dump(1) << '\n'))
      throw std::runtime_error(fmt::format("cannot write {}: is the folder writable?", tmp.string()));
  }
  std::filesystem::rename(tmp, f);
}

void PluginSettings::disable(const std::string& id) {
  enabled.erase(id);
  disabled.insert(id);
}

void PluginSettings::enable(const std::string& id) {
  disabled.erase(id);
  enabled.insert(id);
}

ManagerOptions PluginSettings::manager_options() const {
  ManagerOptions o;
  o.disabled = disabled;
  o.enabled = enabled;
  return o;
}

}  // namespace rt::plugin
