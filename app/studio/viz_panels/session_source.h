// viz_panels/session_source.h — where a visualizer view gets its session: a session of a SQLite store,
// a Chrome/Perfetto trace file, or a session recorded in this process (rt/prof/session_registry.h).
//
//   SessionSource s = parse_store_argument("runs.sqlite:3");   // "runs.sqlite" alone: its newest session
//   std::shared_ptr<const rt::prof::SessionData> data = load_session(s);
//   std::string title = describe(s);                           // "runs.sqlite #3"
//
// Contracts
// - load_session throws rt::ValueError with the file and the reason: a missing or unreadable file, a
//   store without sessions or without the asked one (naming `rtorch trace list FILE`), a trace that does
//   not parse (with the byte offset), a live session that left the registry.
// - parse_store_argument splits at the last ':' only when what follows is a decimal id; ids must be > 0.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rt/prof/events.h"

namespace rt::studio {

struct SessionSource {
  enum class Kind { Store, Trace, Live };
  Kind kind = Kind::Store;
  std::filesystem::path path;         // Store, Trace
  std::optional<int64_t> session_id;  // Store: the stored id; none = the newest
  uint64_t live_id = 0;               // Live: SessionRegistry id
};

SessionSource parse_store_argument(std::string_view argument);
std::shared_ptr<const prof::SessionData> load_session(const SessionSource& source);
std::string describe(const SessionSource& source);

}  // namespace rt::studio
