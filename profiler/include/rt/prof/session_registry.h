// rt/prof/session_registry.h — the profiling sessions recorded in this process, so a studio panel can
// show the training a notebook cell profiles right now (rt.profiler.profile creates a Session in the
// same process) and the last few that finished.
//
//   rt::prof::SessionRegistry& registry = rt::prof::SessionRegistry::instance();
//   for (const rt::prof::RegisteredSession& s : registry.list())         // newest first
//     std::printf("#%llu %s%s\n", (unsigned long long)s.id, s.name.c_str(), s.recording ? " (recording)" : "");
//   if (auto data = registry.snapshot(id))                               // any thread, any time
//     draw(*data);
//   if (auto delta = registry.read_since(id, cursor))                    // a live view's refresh:
//     cursor = delta->cursor;                                            // see rt/prof/session_delta.h
//   if (registry.generation() != seen) refresh_list();                   // cheap polling
//
// Contracts
// - A Session joins the registry when start() succeeds (ids count up from 1 and are never reused)
//   and stays while the Session object lives. When the Session is destroyed it leaves the registry,
//   unless a viewer asked to keep finished sessions (keep_finished(n): the studio's panels do, so they
//   can still show a profile whose Python object is gone; scripts and `rtorch run` keep nothing). A kept
//   session's final data is moved in, not copied (with keep_in_memory = false that is the header and
//   threads only); one of more than kKeepRecords records leaves instead. See Note [Registry bounds].
// - snapshot(id) is thread-safe: for a live Session it is Session::snapshot() (everything recorded
//   so far while recording); for a destroyed one the kept data. nullptr once the id left the
//   registry. Lock order: the registry's mutex, then a session's; a Session calls the registry only
//   from start() (after releasing its own lock) and from its destructor (after it stopped).
// - read_since(id, cursor) is snapshot(id) piece by piece (rt/prof/session_delta.h): for a live Session it is
//   Session::snapshot_since(cursor); for a destroyed one an empty increment when the cursor has read its
//   final data, else a reset holding a copy of it. nullopt once the id left the registry; rt::ValueError for
//   a cursor of another session. Same lock order as snapshot().
// - generation() changes whenever an entry joins, leaves or its Session is destroyed (poll list() for
//   `recording` and counts, which change without it).
//
// Note [Registry bounds]
// At most kCapacity entries, of which at most keep_finished() destroyed ones (the oldest leave first).
// A session that joins when the registry is full evicts the oldest entry
// that is not recording (destroyed sessions' kept data first, then stopped live ones, which simply
// stop being listed). Only one session records at a time, so there is always one to evict. Kept data
// is at most kCapacity * kKeepRecords records (about 64 bytes each), so long headless runs that
// create many big sessions do not keep gigabytes alive.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/prof/events.h"
#include "rt/prof/session.h"
#include "rt/prof/session_delta.h"

RT_API_BEGIN

namespace rt::prof {

struct RegisteredSession {
  uint64_t id = 0;
  std::string name;          // SessionOptions::name; "session <id>" when empty
  bool recording = false;
  bool alive = true;         // false: the Session was destroyed and its final data is kept
  int64_t start_ns = 0;
  RecordCounts counts;       // records drained so far (final once stopped)
  std::string store_path;    // where the session streams to; "" when it has no store
  int64_t store_session_id = 0;
};

class SessionRegistry {
 public:
  static constexpr size_t kCapacity = 8;
  static constexpr size_t kKeepRecords = 1'000'000;  // ops + GPU + memory + counter + step records

  static SessionRegistry& instance();

  std::vector<RegisteredSession> list() const;  // newest first
  std::shared_ptr<const SessionData> snapshot(uint64_t id) const;
  std::optional<SessionDelta> read_since(uint64_t id, const SnapshotCursor& cursor) const;
  uint64_t generation() const;

  // How many destroyed sessions to keep (at most kCapacity; 0, the default, keeps none). Lowering it lets
  // the oldest kept ones go at once.
  void keep_finished(size_t n);
  size_t kept_finished_limit() const;

  // Called by Session (the hook in profiler/src/session/session.cpp); not for other callers.
  uint64_t add(const Session& session, int64_t start_ns);
  void retire(const Session& session, SessionData&& final_data, const SnapshotCursor& final_cursor) noexcept;

  SessionRegistry() = default;
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

 private:
  struct Entry {
    uint64_t id = 0;
    std::string name;
    int64_t start_ns = 0;
    const Session* session = nullptr;            // while the Session lives
    std::shared_ptr<const SessionData> kept;     // after it was destroyed
    SnapshotCursor kept_cursor;                  // ... and the cursor of a reader that has all of it
    RecordCounts counts;
    std::string store_path;
    int64_t store_session_id = 0;
  };

  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // oldest first
  uint64_t next_id_ = 1;
  uint64_t generation_ = 0;
  size_t keep_finished_ = 0;

  void trim_finished();  // with mu_ held: drops the oldest destroyed entries past keep_finished_
};

}  // namespace rt::prof

RT_API_END
