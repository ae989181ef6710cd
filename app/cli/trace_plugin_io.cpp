#include "trace_plugin_io.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "rt/error.h"
#include "rt/plugin_host/plugin_manager.h"
#include "rt/plugin_host/trace_plugins.h"
#include "trace_source.h"

namespace rt::cli {
namespace {

std::string ids_of(const std::vector<rt::plugin::Manifest>& plugins) {
  std::string out;
  for (const auto& m : plugins) out += (out.empty() ? "" : ", ") + m.id;
  return out.empty() ? std::string("none") : out;
}

std::string search_path_hint() {
  std::string paths;
  for (const auto& p : rt::plugin::default_search_paths()) paths += (paths.empty() ? "" : ", ") + p.string();
  return fmt::format("plugins are looked for in {} and $RT_PLUGIN_PATH", paths);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

bool looks_like_chrome_trace(const std::filesystem::path& path) {
  if (is_trace_file(path)) return true;
  std::ifstream in(path, std::ios::binary);
  char head[512] = {};
  in.read(head, sizeof head);
  const auto n = size_t(in.gcount());
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return true;
  for (size_t i = 0; i < n; ++i) {
    if (std::isspace(static_cast<unsigned char>(head[i]))) continue;
    return head[i] == '{' || head[i] == '[';
  }
  return false;
}

rt::plugin::Manifest importer_plugin(const std::string& id) {
  const auto importers = rt::plugin::find_trace_plugins(rt::plugin::Kind::Importer, {}, /*include_disabled=*/true);
  for (const auto& m : importers)
    if (m.id == id) return m;
  throw rt::Error(fmt::format("no importer plugin '{}' (importers: {}); {}; `rtorch plugin list` shows them all", id,
                              ids_of(importers), search_path_hint()));
}

std::optional<rt::plugin::Manifest> detect_plugin_importer(const std::filesystem::path& file, std::string& tried) {
  const auto importers = rt::plugin::find_trace_plugins(rt::plugin::Kind::Importer);
  std::vector<rt::plugin::DetectResult> results;
  std::optional<rt::plugin::Manifest> pick = rt::plugin::detect_importer(importers, file, {}, &results);
  tried.clear();
  for (const auto& r : results)
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", r.plugin_id,
                         r.problem.empty() ? std::to_string(r.confidence) : r.problem);
  if (tried.empty()) tried = "no importer plugins found; " + search_path_hint();
  return pick;
}

rt::plugin::Manifest exporter_plugin(const std::string& format, const std::string& plugin_id,
                                     const std::filesystem::path& output) {
  const auto exporters = rt::plugin::find_trace_plugins(rt::plugin::Kind::Exporter, {}, !plugin_id.empty());
  std::string formats;
  for (const auto& m : exporters)
    for (const auto& f : m.formats) formats += fmt::format("{}{} ({})", formats.empty() ? "" : ", ", f.name, m.id);
  if (formats.empty()) formats = "none from plugins";
  if (!plugin_id.empty()) {
    for (const auto& m : exporters)
      if (m.id == plugin_id) return m;
    throw rt::Error(fmt::format("no exporter plugin '{}' (exporters: {}); {}", plugin_id, ids_of(exporters),
                                search_path_hint()));
  }
  if (!format.empty()) {
    if (auto m = rt::plugin::find_exporter(exporters, format)) return *m;
    throw rt::Error(fmt::format("no exporter for format '{}'; formats: chrome (built in), {}; {}", format, formats,
                                search_path_hint()));
  }
  const std::string name = lower(output.filename().string());
  for (const auto& m : exporters)
    for (const auto& f : m.formats)
      for (const auto& ext : f.extensions)
        if (name.size() > ext.size() && name.ends_with(lower(ext))) return m;
  throw rt::Error(fmt::format("cannot tell the format from '{}': give --format (chrome (built in, .json/.json.gz), "
                              "{})",
                              output.string(), formats));
}

}  // namespace rt::cli
