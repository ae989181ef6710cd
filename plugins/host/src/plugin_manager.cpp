// Finding, ordering, loading and running plugins (rt/plugin_host/plugin_manager.h). See docs/plugins.md,
// "Lifecycle", and Note [Crash markers] in crash_marker.cpp.
#include "rt/plugin_host/plugin_manager.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <system_error>

#include "dependency_order.h"
#include "rt/plugin_host/crash_marker.h"
#include "rt/plugin_host/op_registry.h"

namespace rt::plugin {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool is_active(PluginState s) { return s == PluginState::Initialized || s == PluginState::Running; }

// Calls into a plugin: a C function must not throw, but a plugin written without the SDK might let a C++
// exception escape. It is caught here and becomes the plugin's error instead of taking the host down.
template <typename F>
std::string call_guarded(const char* what, F&& f) {
  try {
    f();
    return {};
  } catch (const std::exception& e) {
    return fmt::format("{} threw a C++ exception across the C boundary ({}); plugins built with rt/plugin/sdk.h "
                       "catch them",
                       what, e.what());
  } catch (...) {
    return fmt::format("{} threw across the C boundary; plugins built with rt/plugin/sdk.h catch exceptions", what);
  }
}

std::string error_text(const RtError& e, RtStatus status) {
  std::string msg(e.message, strnlen(e.message, sizeof e.message));
  if (msg.empty()) msg = fmt::format("failed with status {} and no message", int(status));
  return msg;
}

std::filesystem::path manifest_for(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path / "plugin.json";
  if (path.filename() == "plugin.json") return path;
  return path.parent_path() / "plugin.json";  // a library file: torch.ops.load_library's habit
}

std::filesystem::path canonical_or_same(const std::filesystem::path& p) {
  std::error_code ec;
  auto c = std::filesystem::weakly_canonical(p, ec);
  return ec ? p : c;
}

}  // namespace

const char* state_name(PluginState s) {
  switch (s) {
    case PluginState::Invalid: return "invalid";
    case PluginState::Disabled: return "disabled";
    case PluginState::Found: return "found";
    case PluginState::Failed: return "failed";
    case PluginState::Loaded: return "loaded";
    case PluginState::Initialized: return "initialized";
    case PluginState::Running: return "running";
    case PluginState::Stopped: return "stopped";
  }
  return "?";
}

std::vector<std::filesystem::path> default_search_paths() {
  std::vector<std::filesystem::path> paths;
  // The install's folder beside the libraries, then the build tree's (scripts/run.sh runs from it).
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&default_search_paths), &self) && self.dli_fname) {
    std::filesystem::path lib_dir = canonical_or_same(self.dli_fname).parent_path();
    paths.push_back(lib_dir / "rustytorch" / "plugins");
    paths.push_back(lib_dir.parent_path() / "plugins");  // build/lib/librt_plugin_host.so -> build/plugins
  }
#ifdef RT_BUILD_PLUGIN_DIR
  paths.emplace_back(RT_BUILD_PLUGIN_DIR);
#endif
  if (const char* d = std::getenv("XDG_DATA_HOME"); d && *d) {
    paths.push_back(std::filesystem::path(d) / "rustytorch" / "plugins");
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    paths.push_back(std::filesystem::path(home) / ".local" / "share" / "rustytorch" / "plugins");
  }
  if (const char* extra = std::getenv("RT_PLUGIN_PATH"); extra && *extra) {
    std::string_view rest(extra);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view part = rest.substr(0, colon);
      if (!part.empty()) paths.emplace_back(std::string(part));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  // The same folder reached twice (the build tree through both routes) is searched once.
  std::vector<std::filesystem::path> unique;
  for (auto& p : paths) {
    auto c = canonical_or_same(p);
    bool seen = false;
    for (auto& u : unique) seen = seen || u == c;
    if (!seen) unique.push_back(c);
  }
  return unique;
}

PluginManager::PluginManager(ManagerOptions options) : options_(std::move(options)) {}
PluginManager::~PluginManager() = default;

void PluginManager::discover(const std::vector<std::filesystem::path>& search_paths) {
  for (const auto& base : search_paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(base, ec)) continue;
    std::vector<std::filesystem::path> folders;
    for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec) && std::filesystem::exists(it->path() / "plugin.json", ec)) folders.push_back(it->path());
    std::sort(folders.begin(), folders.end());
    for (const auto& f : folders) add(f);
  }
}

PluginRecord& PluginManager::add(const std::filesystem::path& path) {
  std::filesystem::path file = canonical_or_same(manifest_for(path));
  for (PluginRecord& r : records_)
    if (r.manifest.file == file) return r;

  PluginRecord rec;
  rec.manifest.file = file;
  try {
    rec.manifest = read_manifest(file);
    rec.manifest.file = file;
  } catch (const ManifestError& e) {
    rec.manifest.id = file.parent_path().filename().string();  // what the list can show for it
    rec.state = PluginState::Invalid;
    rec.error = e.what();
    records_.push_back(std::move(rec));
    return records_.back();
  }

  const std::string& id = rec.manifest.id;
  for (PluginRecord& other : records_) {
    if (other.state == PluginState::Invalid && other.error.rfind("duplicate", 0) != 0) continue;
    if (other.manifest.id != id) continue;
    rec.state = PluginState::Invalid;
    rec.error = fmt::format("duplicate id {}: also in {}; remove one of the two folders", id,
                            other.manifest.folder().string());
    if (!is_active(other.state) && other.state != PluginState::Loaded) {
      other.state = PluginState::Invalid;
      other.error = fmt::format("duplicate id {}: also in {}; remove one of the two folders", id,
                                rec.manifest.folder().string());
    }
    break;
  }
  if (rec.state == PluginState::Found) {
    if (options_.safe_mode) {
      rec.state = PluginState::Disabled;
      rec.error = "safe mode: no plugin is loaded (start without --safe-mode to load them)";
    } else if (options_.noload.count(id)) {
      rec.state = PluginState::Disabled;
      rec.error = fmt::format("not loaded: --noload {}", id);
    } else if (options_.disabled.count(id)) {
      rec.state = PluginState::Disabled;
      rec.error = "disabled by the user (enable it in the Plugins dialog, or `rtorch plugin enable " + id + "`)";
    } else if (!rec.manifest.enabled_by_default && !options_.enabled.count(id)) {
      rec.state = PluginState::Disabled;
      rec.error = "off by default (its manifest says \"enabled_by_default\": false); enable it in the Plugins dialog";
    }
  }
  records_.push_back(std::move(rec));
  return records_.back();
}

const PluginRecord* PluginManager::find(std::string_view id) const {
  for (const PluginRecord& r : records_)
    if (r.manifest.id == id && r.state != PluginState::Invalid) return &r;
  for (const PluginRecord& r : records_)
    if (r.manifest.id == id) return &r;
  return nullptr;
}

void PluginManager::fail(PluginRecord& r, std::string error) {
  r.state = PluginState::Failed;
  r.error = std::move(error);
}

// Missing dependencies and unaccepted versions first, then cycles; what is left is ordered.
void PluginManager::resolve() {
  std::map<std::string, PluginRecord*> by_id;
  for (PluginRecord& r : records_)
    if (r.state != PluginState::Invalid) by_id.emplace(r.manifest.id, &r);

  for (PluginRecord& r : records_) {
    if (r.state != PluginState::Found) continue;
    for (const Dependency& d : r.manifest.dependencies) {
      auto it = by_id.find(d.id);
      if (it == by_id.end()) {
        fail(r, fmt::format("requires {} ({}), which is not installed; install it into a plugin folder "
                            "(`rtorch plugin list` shows where they are searched)",
                            d.id, d.requirement));
        break;
      }
      if (!d.accepts(it->second->manifest.version)) {
        fail(r, fmt::format("requires {} {}, but version {} is installed", d.id, d.requirement,
                            it->second->manifest.version.str()));
        break;
      }
    }
  }

  std::vector<DependencyNode> nodes;
  std::vector<PluginRecord*> node_record;
  for (PluginRecord& r : records_) {
    if (r.state == PluginState::Invalid) continue;
    DependencyNode n{r.manifest.id, {}};
    for (const Dependency& d : r.manifest.dependencies) n.depends_on.push_back(d.id);
    nodes.push_back(std::move(n));
    node_record.push_back(&r);
  }
  DependencyOrder o = order_by_dependencies(nodes);
  for (const auto& cycle : o.cycles)
    for (size_t k = 0; k + 1 < cycle.size(); ++k) {
      PluginRecord* r = by_id[cycle[k]];
      if (r && (r->state == PluginState::Found || r->state == PluginState::Failed))
        fail(*r, fmt::format("dependency cycle: {}; remove one of these dependencies", format_chain(cycle)));
    }
  for (size_t i : o.in_cycle) {
    PluginRecord* r = node_record[i];
    if (r->state == PluginState::Found)
      fail(*r, "depends on a plugin in a dependency cycle (see its error)");
  }
  order_.clear();
  for (size_t i : o.order)
    for (size_t k = 0; k < records_.size(); ++k)
      if (&records_[k] == node_record[i]) order_.push_back(k);
}

bool PluginManager::dependencies_ready(PluginRecord& r) {
  for (const Dependency& d : r.manifest.dependencies) {
    const PluginRecord* dep = find(d.id);
    if (dep && is_active(dep->state)) continue;
    r.state = PluginState::Disabled;
    if (!dep)
      r.error = fmt::format("depends on {}, which is not installed", d.id);
    else
      r.error = fmt::format("depends on {}, which {}{}", d.id,
                            dep->state == PluginState::Failed     ? "failed"
                            : dep->state == PluginState::Disabled ? "is disabled"
                                                                  : "is not loaded",
                            dep->error.empty() ? "" : ": " + dep->error);
    return false;
  }
  return true;
}

void check_plugin_info(const RtPluginInfo* info, const Manifest& m) {
  const std::string& id = m.id;
  if (!info)
    throw std::runtime_error(fmt::format("{}: rt_plugin_entry returned NULL; it must return its RtPluginInfo", id));
  // ABI 1.0's RtPluginInfo ends with `panel`: every 1.x plugin has at least that much; later minors append.
  constexpr uint32_t kMinimumSize = offsetof(RtPluginInfo, panel) + sizeof(info->panel);
  if (info->struct_size < kMinimumSize)
    throw std::runtime_error(fmt::format("{}: RtPluginInfo.struct_size is {} (at least {}); set it to "
                                         "sizeof(RtPluginInfo)",
                                         id, info->struct_size, kMinimumSize));
  if (info->abi_major != RT_PLUGIN_ABI_MAJOR)
    throw std::runtime_error(fmt::format("{}: built for plugin ABI {}.{}, this RustyTorch++ speaks {}.{}; rebuild "
                                         "the plugin against this version's rt/plugin/abi.h",
                                         id, info->abi_major, info->abi_minor, RT_PLUGIN_ABI_MAJOR,
                                         RT_PLUGIN_ABI_MINOR));
  if (info->abi_minor > RT_PLUGIN_ABI_MINOR)
    throw std::runtime_error(fmt::format("{}: built for plugin ABI {}.{}, newer than this RustyTorch++'s {}.{}; "
                                         "update RustyTorch++ or build the plugin against this version",
                                         id, info->abi_major, info->abi_minor, RT_PLUGIN_ABI_MAJOR,
                                         RT_PLUGIN_ABI_MINOR));
  if (m.abi_major != 0 && (m.abi_major != info->abi_major || m.abi_minor != info->abi_minor))
    throw std::runtime_error(fmt::format("{}: plugin.json says \"abi\": \"{}.{}\" but the library was built for "
                                         "{}.{}; make them agree",
                                         id, m.abi_major, m.abi_minor, info->abi_major, info->abi_minor));
  std::string lib_id = info->id ? info->id : "";
  if (lib_id != id)
    throw std::runtime_error(fmt::format("{}: the library calls itself \"{}\"; plugin.json's \"id\" and "
                                         "RtPluginInfo.id must be the same",
                                         id, lib_id));
  std::string lib_version = info->version ? info->version : "";
  if (lib_version != m.version.str())
    throw std::runtime_error(fmt::format("{}: the library is version \"{}\" but plugin.json says \"{}\"; make "
                                         "them agree",
                                         id, lib_version, m.version.str()));
  auto has = [&](auto field_ptr) { return info->*field_ptr != nullptr; };
  struct KindTable {
    Kind kind;
    bool present;
    const char* field;
  } tables[] = {{Kind::Ops, has(&RtPluginInfo::ops), "ops"},
                {Kind::Importer, has(&RtPluginInfo::importer), "importer"},
                {Kind::Exporter, has(&RtPluginInfo::exporter), "exporter"},
                {Kind::Panel, has(&RtPluginInfo::panel), "panel"}};
  for (const KindTable& t : tables) {
    if (m.has_kind(t.kind) && !t.present)
      throw std::runtime_error(fmt::format("{}: plugin.json lists kind \"{}\" but RtPluginInfo.{} is NULL", id,
                                           kind_name(t.kind), t.field));
    if (!m.has_kind(t.kind) && t.present)
      throw std::runtime_error(fmt::format("{}: RtPluginInfo.{} is set but plugin.json's \"kinds\" lacks \"{}\"",
                                           id, t.field, kind_name(t.kind)));
  }
}

void PluginManager::load(PluginRecord& r) {
  if (options_.on_phase) options_.on_phase(r.manifest.id, "load");
  auto t0 = std::chrono::steady_clock::now();
  CrashMarker marker(options_.app, r.manifest.id, "load");
  std::filesystem::path lib = r.manifest.library_path();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(lib, ec)) {
    fail(r, fmt::format("library {} does not exist (plugin.json's \"library\"); build the plugin first",
                        lib.string()));
    return;
  }
  dlerror();
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    fail(r, fmt::format("cannot load {}: {}", lib.string(), why ? why : "unknown dlopen error"));
    return;
  }
  r.library = handle;  // kept open: see Note [Op libraries stay loaded] in docs/plugins.md
  auto entry = reinterpret_cast<RtPluginEntryFn>(dlsym(handle, RT_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    fail(r, fmt::format("{} exports no {} function; export it with RT_PLUGIN_EXPORT (rt/plugin/abi.h) or "
                        "RT_PLUGIN_INFO (rt/plugin/sdk.h)",
                        lib.filename().string(), RT_PLUGIN_ENTRY_SYMBOL));
    return;
  }
  const RtPluginInfo* info = nullptr;
  if (std::string err = call_guarded(RT_PLUGIN_ENTRY_SYMBOL, [&] { info = entry(); }); !err.empty()) {
    fail(r, err);
    return;
  }
  try {
    check_plugin_info(info, r.manifest);
  } catch (const std::exception& e) {
    fail(r, e.what());
    return;
  }
  r.info = info;
  r.state = PluginState::Loaded;
  r.load_ms = ms_since(t0);
}

void PluginManager::initialize(PluginRecord& r) {
  if (options_.on_phase) options_.on_phase(r.manifest.id, "initialize");
  auto t0 = std::chrono::steady_clock::now();
  CrashMarker marker(options_.app, r.manifest.id, "initialize");
  if (r.info->initialize) {
    RtError error{};
    RtStatus status = RT_STATUS_OK;
    std::string thrown = call_guarded("initialize", [&] { status = r.info->initialize(host_api(), &error); });
    if (!thrown.empty()) return fail(r, thrown);
    if (status != RT_STATUS_OK) return fail(r, "initialize failed: " + error_text(error, status));
  }
  if (r.info->ops) {
    try {
      register_op_library(*r.info->ops, r.manifest.id);
    } catch (const std::exception& e) {
      if (r.info->shutdown) call_guarded("shutdown", [&] { r.info->shutdown(); });
      return fail(r, e.what());
    }
  }
  r.state = PluginState::Initialized;
  r.initialize_ms = ms_since(t0);
}

void PluginManager::load_and_initialize(const std::set<Kind>& kinds) {
  resolve();
  for (size_t k : order_) {
    PluginRecord& r = records_[k];
    if (r.state != PluginState::Found) continue;
    bool wanted = false;
    for (Kind kind : r.manifest.kinds) wanted = wanted || kinds.count(kind);
    if (!wanted || !dependencies_ready(r)) continue;
    load(r);
    if (r.state == PluginState::Loaded) initialize(r);
  }
}

void PluginManager::load_one(std::string_view id) {
  PluginRecord* r = nullptr;
  for (PluginRecord& x : records_)
    if (x.manifest.id == id && x.state != PluginState::Invalid) r = &x;
  if (!r) {
    if (const PluginRecord* bad = find(id)) throw std::runtime_error(bad->error);
    throw std::runtime_error(fmt::format("no plugin {} was added", id));
  }
  if (r->state != PluginState::Found) return;
  resolve();
  if (r->state != PluginState::Found || !dependencies_ready(*r)) return;
  load(*r);
  if (r->state != PluginState::Loaded) return;
  initialize(*r);
  if (r->state != PluginState::Initialized) return;
  if (options_.on_phase) options_.on_phase(r->manifest.id, "extensions_initialized");
  if (r->info->extensions_initialized) call_guarded("extensions_initialized", [&] { r->info->extensions_initialized(); });
  r->state = PluginState::Running;
  if (r->info->delayed_initialize) {
    if (options_.on_phase) options_.on_phase(r->manifest.id, "delayed_initialize");
    RtError error{};
    RtStatus status = RT_STATUS_OK;
    std::string thrown = call_guarded("delayed_initialize", [&] { status = r->info->delayed_initialize(&error); });
    if (!thrown.empty()) fail(*r, thrown);
    else if (status != RT_STATUS_OK) fail(*r, "delayed_initialize failed: " + error_text(error, status));
  }
}

void PluginManager::extensions_initialized() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    PluginRecord& r = records_[*it];
    if (r.state != PluginState::Initialized) continue;
    if (options_.on_phase) options_.on_phase(r.manifest.id, "extensions_initialized");
    if (r.info->extensions_initialized) {
      std::string thrown = call_guarded("extensions_initialized", [&] { r.info->extensions_initialized(); });
      if (!thrown.empty()) {
        fail(r, thrown);
        continue;
      }
    }
    r.state = PluginState::Running;
  }
}

void PluginManager::delayed_initialize() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    PluginRecord& r = records_[*it];
    if (r.state != PluginState::Running || !r.info->delayed_initialize) continue;
    if (options_.on_phase) options_.on_phase(r.manifest.id, "delayed_initialize");
    RtError error{};
    RtStatus status = RT_STATUS_OK;
    std::string thrown = call_guarded("delayed_initialize", [&] { status = r.info->delayed_initialize(&error); });
    if (!thrown.empty()) fail(r, thrown);
    else if (status != RT_STATUS_OK) fail(r, "delayed_initialize failed: " + error_text(error, status));
  }
}

void PluginManager::shutdown() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    PluginRecord& r = records_[*it];
    if (!is_active(r.state)) continue;
    if (options_.on_phase) options_.on_phase(r.manifest.id, "shutdown");
    if (r.info->shutdown) call_guarded("shutdown", [&] { r.info->shutdown(); });
    r.state = PluginState::Stopped;
  }
}

void PluginManager::mark_failed(std::string_view id, std::string error) {
  for (PluginRecord& r : records_)
    if (r.manifest.id == id && r.state != PluginState::Invalid) return fail(r, std::move(error));
}

std::vector<const PluginRecord*> PluginManager::load_order() const {
  std::vector<const PluginRecord*> out;
  for (size_t k : order_) out.push_back(&records_[k]);
  return out;
}

PluginManager& process_plugins() {
  static PluginManager* manager = new PluginManager();  // never destroyed: op libraries outlive static teardown
  return *manager;
}

std::unique_lock<std::recursive_mutex> lock_process_plugins() {
  static std::recursive_mutex mutex;
  return std::unique_lock<std::recursive_mutex>(mutex);
}

const PluginRecord& load_plugin(const std::filesystem::path& path) {
  auto lock = lock_process_plugins();
  PluginManager& pm = process_plugins();
  PluginRecord& r = pm.add(path);
  if (r.state == PluginState::Invalid) throw std::runtime_error(r.error);
  if (r.state == PluginState::Found) pm.load_one(r.manifest.id);
  if (r.state == PluginState::Failed || r.state == PluginState::Disabled) throw std::runtime_error(r.error);
  return r;
}

}  // namespace rt::plugin
