#include "trace_source.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

#include "rt/error.h"

namespace rt::cli {

bool is_trace_file(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

rt::prof::Store open_existing_store(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw rt::Error(fmt::format("'{}' does not exist; give the path of a session store (rtorch run --store "
                                "DB.sqlite writes one; the default store is {})",
                                path.string(), rt::prof::Store::default_path().string()));
  if (std::filesystem::is_directory(path, ec))
    throw rt::Error(fmt::format("'{}' is a directory; give the path of a session store file", path.string()));
  return rt::prof::Store::open(path);
}

int64_t pick_session(const rt::prof::Store& store, std::optional<int64_t> requested) {
  if (requested) return *requested;  // load_session names the ids that exist when this one does not
  const auto sessions = store.list_sessions();
  if (sessions.empty())
    throw rt::Error(fmt::format("store '{}' has no sessions; record one with `rtorch run --store {} SCRIPT.py` "
                                "or add one with `rtorch trace import TRACE.json --store {}`",
                                store.path().string(), store.path().string(), store.path().string()));
  return std::max_element(sessions.begin(), sessions.end(),
                          [](const auto& a, const auto& b) { return a.id < b.id; })
      ->id;
}

LoadedSession load_store_or_trace(const std::filesystem::path& path, std::optional<int64_t> session,
                                  const rt::prof::TraceProgressFn& progress) {
  LoadedSession out;
  if (is_trace_file(path)) {
    if (session)
      throw rt::ValueError(fmt::format("--session selects a session of a store, but '{}' is a trace file holding "
                                       "one session; drop --session",
                                       path.string()));
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw rt::Error(fmt::format("'{}' does not exist; give the path of a Chrome trace (.json or .json.gz) "
                                  "or of a session store",
                                  path.string()));
    out.data = rt::prof::import_chrome_trace(path, {.progress = progress}).session;
    out.origin = fmt::format("trace {}", path.string());
    return out;
  }
  rt::prof::Store store = open_existing_store(path);
  const int64_t id = pick_session(store, session);
  out.data = store.load_session(id);
  out.origin = fmt::format("session {} of {}", id, path.string());
  out.store_id = id;
  return out;
}

}  // namespace rt::cli
