// app/cli/trace_plugin_io.h — which trace importer or exporter plugin `rtorch trace import|export` uses.
//
//   rt::plugin::Manifest m = importer_plugin("org.rustytorch.folded-stacks");   // --plugin ID
//   std::optional<rt::plugin::Manifest> d = detect_plugin_importer("profile.txt", tried);  // no --plugin
//   rt::plugin::Manifest e = exporter_plugin("folded-stacks", "", "out.folded");   // --format / --plugin / -o
//
// Plugins are found with rt::plugin::find_trace_plugins (default_search_paths(): build/plugins in a build tree,
// ~/.local/share/rustytorch/plugins, $RT_PLUGIN_PATH); they run out of process (rt/plugin_host/trace_plugins.h).
// Every failure throws an rt::Error whose message names what was looked for, what exists and the fix.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "rt/plugin_host/manifest.h"

namespace rt::cli {

// Whether `path` is a file the built-in Chrome-trace reader takes: a .json/.json.gz name, or content that
// starts (after whitespace) with '{' or '[', or gzip's magic bytes.
bool looks_like_chrome_trace(const std::filesystem::path& path);

// The importer plugin with this id; throws listing the importers there are.
rt::plugin::Manifest importer_plugin(const std::string& id);

// The importer plugin most confident about `file` (each asked in a child), or nullopt; `tried` says what each
// answered ("org.x.y: 0, org.z: crashed (SIGSEGV) ...") for the error message.
std::optional<rt::plugin::Manifest> detect_plugin_importer(const std::filesystem::path& file, std::string& tried);

// The exporter plugin for `format` ("folded-stacks"), or with id `plugin_id` when given, or (both empty) the
// one whose format lists `output`'s extension; throws naming the formats there are.
rt::plugin::Manifest exporter_plugin(const std::string& format, const std::string& plugin_id,
                                     const std::filesystem::path& output);

}  // namespace rt::cli
