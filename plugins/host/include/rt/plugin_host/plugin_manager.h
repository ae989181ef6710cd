// rt/plugin_host/plugin_manager.h — finding, ordering, loading, initializing and shutting down plugins.
//
//   rt::plugin::PluginManager pm;
//   pm.discover(rt::plugin::default_search_paths());   // reads every */plugin.json; loads no code
//   pm.load_and_initialize();                           // resolve, dlopen, check the ABI, initialize
//   pm.extensions_initialized();                        // reverse order
//   ... the studio's first frame ...
//   pm.delayed_initialize();
//   for (const rt::plugin::PluginRecord& p : pm.plugins())
//     std::printf("%s %s %s %s\n", p.manifest.id.c_str(), p.manifest.version.str().c_str(),
//                 rt::plugin::state_name(p.state), p.error.c_str());
//   pm.shutdown();                                      // reverse dependency order
//
// Qt Creator's order and rules (docs/plugins.md, "Lifecycle"):
//  - a duplicate id is an error on both records; a dependency cycle is reported with its chain
//    ("a -> b -> a") on each plugin in it; a missing dependency, or one whose version is not accepted,
//    names it;
//  - a plugin that fails to load or initialize is Failed with its message, and every plugin that depends on
//    it is Disabled with "depends on <id>, which failed"; the others go on;
//  - libraries open with RTLD_NOW | RTLD_LOCAL; a missing rt_plugin_entry, an ABI major that differs, a minor
//    newer than the host's, or an id or version differing from the manifest's is refused with both values;
//  - the crash marker (rt/plugin_host/crash_marker.h) brackets load and initialize, so a crash there is named
//    on the next start.
// Op libraries are never unloaded; shutdown() calls each plugin's shutdown and leaves the code mapped.
#pragma once
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "rt/plugin/abi.h"
#include "rt/plugin_host/manifest.h"

namespace rt::plugin {

enum class PluginState {
  Invalid,      // its plugin.json could not be read (error says why); manifest holds what was read
  Disabled,     // switched off: by the user, --safe-mode, --noload, or a dependency that failed (error says which)
  Found,        // manifest read, not loaded yet
  Failed,       // loading or initializing failed (error says why)
  Loaded,       // library open, ABI checked, not initialized
  Initialized,  // initialize succeeded
  Running,      // extensions_initialized (and, where there is one, delayed_initialize) done
  Stopped       // shutdown done
};
const char* state_name(PluginState s);  // "invalid", "disabled", ...

struct PluginRecord {
  Manifest manifest;
  PluginState state = PluginState::Found;
  std::string error;                // why it is Invalid, Disabled or Failed
  double load_ms = 0;               // dlopen + entry + checks
  double initialize_ms = 0;
  void* library = nullptr;          // dlopen handle (never closed while ops may run)
  const RtPluginInfo* info = nullptr;
};

// Where plugins are looked for, in order: the install's plugin folder (<prefix>/lib/rustytorch/plugins, and
// a build tree's build/plugins), $XDG_DATA_HOME/rustytorch/plugins (~/.local/share/...), then each folder of
// $RT_PLUGIN_PATH (':'-separated). Each holds one folder per plugin.
std::vector<std::filesystem::path> default_search_paths();

struct ManagerOptions {
  std::string app = "rtorch";        // names this process's crash markers (rt/plugin_host/crash_marker.h)
  bool safe_mode = false;            // load nothing (records stay Found -> Disabled "safe mode")
  std::set<std::string> noload;      // ids not to load (--noload ID)
  std::set<std::string> disabled;    // ids the user switched off (the settings file)
  std::set<std::string> enabled;     // ids switched on although their manifest says enabled_by_default=false
  // Called before each step runs a plugin's code: "load", "initialize", "extensions_initialized",
  // "delayed_initialize", "shutdown" (a splash screen's status line; `rtorch plugin check` names a crash by it).
  std::function<void(const std::string& id, const char* phase)> on_phase;
};

class PluginManager {
 public:
  explicit PluginManager(ManagerOptions options = {});
  // Replaces the options; only for plugins added after the call (call it before discover).
  void set_options(ManagerOptions options) { options_ = std::move(options); }
  ~PluginManager();  // does not shut down: call shutdown() where the order matters
  PluginManager(const PluginManager&) = delete;
  PluginManager& operator=(const PluginManager&) = delete;

  // Reads every <path>/<folder>/plugin.json (missing paths are skipped). Call before loading.
  void discover(const std::vector<std::filesystem::path>& search_paths);
  // Adds one plugin folder, its plugin.json, or its library file with plugin.json beside it, as
  // `rtorch plugin check DIR` and load_plugin do. Adding a plugin already known (same id, same folder) returns
  // its record; another folder with a known id is a duplicate (Invalid).
  PluginRecord& add(const std::filesystem::path& path);
  // Loads and initializes one added plugin (its dependencies must be initialized already) and runs its
  // extensions_initialized and delayed_initialize: what load_plugin does for one plugin in a running process.
  void load_one(std::string_view id);

  // Resolves dependencies, then loads and initializes each plugin in dependency order. Only plugins of
  // `kinds` are loaded (the CLI loads ops and importers, the studio everything); others stay Found.
  void load_and_initialize(const std::set<Kind>& kinds = {Kind::Ops, Kind::Panel, Kind::Importer, Kind::Exporter});
  void extensions_initialized();
  void delayed_initialize();
  void shutdown();

  // A host that found a loaded plugin unusable (a panel built against another studio SDK, a panel whose draw
  // threw) marks it Failed with the reason, as the Plugins dialog then shows.
  void mark_failed(std::string_view id, std::string error);

  // Every plugin found, in discovery order. Records are never removed, so their addresses stay valid.
  const std::deque<PluginRecord>& plugins() const { return records_; }
  const PluginRecord* find(std::string_view id) const;
  // The plugins, dependencies first (the order initialize ran in); only those that resolved.
  std::vector<const PluginRecord*> load_order() const;

 private:
  void resolve();
  void load(PluginRecord& r);
  void initialize(PluginRecord& r);
  void fail(PluginRecord& r, std::string error);
  bool dependencies_ready(PluginRecord& r);

  ManagerOptions options_;
  std::deque<PluginRecord> records_;
  std::vector<size_t> order_;  // indexes into records_, dependencies first
};

// The process's manager: what Python's rt.ops.load_library, the CLI and the studio use.
PluginManager& process_plugins();
// Held while reading or changing process_plugins() from more than one thread (the studio's GUI thread lists
// what the notebook's interpreter thread may be loading with rt.ops.load_library); load_plugin takes it.
std::unique_lock<std::recursive_mutex> lock_process_plugins();
// Loads one plugin into process_plugins() and initializes it: its folder, its plugin.json, or its library
// file with the plugin.json beside it (torch.ops.load_library's habit). Loading the same plugin again
// returns the same record. Throws std::runtime_error with the record's error when it failed.
const PluginRecord& load_plugin(const std::filesystem::path& path);

// The host's table, the same for every plugin of the process.
const RtHostApi* host_api();

// Checks what rt_plugin_entry returned against the manifest and this host; throws std::runtime_error with the
// message a user sees ("org.x.y: built for plugin ABI 2.0, this RustyTorch++ speaks 1.0; rebuild the plugin
// against this version"). Exposed for `rtorch plugin check` and the tests.
void check_plugin_info(const RtPluginInfo* info, const Manifest& m);

}  // namespace rt::plugin
