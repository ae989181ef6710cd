// app/cli/trace_source.h — what `rtorch trace` reads: a session store or a Chrome trace file.
//
//   rt::prof::Store store = open_existing_store("runs.sqlite");       // never creates a file
//   int64_t id = pick_session(store, std::nullopt);                    // the latest session
//   LoadedSession s = load_store_or_trace("step.json.gz", std::nullopt, progress.callback());
//
// Contracts: every failure throws an rt::Error (or the library's StoreError/TraceError) whose message
// names the file, the problem and the fix; nothing here prints.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "rt/prof/chrome_trace.h"
#include "rt/prof/events.h"
#include "rt/prof/store.h"

namespace rt::cli {

// .json / .json.gz (case-insensitive): a Chrome trace; anything else is treated as a store.
bool is_trace_file(const std::filesystem::path& path);

// Store::open, but a missing file is an error instead of a new empty store.
rt::prof::Store open_existing_store(const std::filesystem::path& path);

// `requested`, or the newest session when none is requested; throws when the store has none.
int64_t pick_session(const rt::prof::Store& store, std::optional<int64_t> requested);

struct LoadedSession {
  rt::prof::SessionData data;
  std::string origin;           // "session 3 of runs.sqlite" / "trace step.json"
  std::optional<int64_t> store_id;  // set when read from a store
};

// A trace file is imported into memory (`session` must be empty); a store file is read.
LoadedSession load_store_or_trace(const std::filesystem::path& path, std::optional<int64_t> session,
                                  const rt::prof::TraceProgressFn& progress);

}  // namespace rt::cli
