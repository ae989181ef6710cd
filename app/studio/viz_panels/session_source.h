// viz_panels/session_source.h — where a visualizer view gets its session: a session of a SQLite store,
// a Chrome/Perfetto trace file, a session recorded in this process (rt/prof/session_registry.h), or a rank of a
// job the studio is attached to (attach/attached_sessions.h).
//
//   SessionSource s = parse_store_argument("runs.sqlite:3");   // "runs.sqlite" alone: its newest session
//   std::shared_ptr<const rt::prof::SessionData> data = load_session(s);
//   std::string title = describe(s);                           // "runs.sqlite #3"
//   load_session(parse_store_argument("job.sqlite:job=1f2e3d4c"));  // every rank of that launched job
//
// Contracts
// - load_session throws rt::ValueError with the file and the reason: a missing or unreadable file, a
//   store without sessions or without the asked one (naming `rtorch trace list FILE`), a trace that does
//   not parse (with the byte offset), a live session that left the registry.
// - parse_store_argument splits at the last ':' only when what follows is a decimal id; ids must be > 0.
//   "DB:job=ID" names a launched job's ranks (StoreJob): its latest run's sessions, one per rank, merged by
//   rt::prof::merge_rank_sessions (rt/prof/rank_merge.h) so one timeline shows them side by side.
// - A StoreJob source without a restart_count loads the job's latest run (the highest restart count); a job
//   the store does not hold is an rt::ValueError listing the jobs it does hold.
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
  enum class Kind { Store, Trace, Live, StoreJob, Attached, AttachedJob };
  Kind kind = Kind::Store;
  std::filesystem::path path;         // Store, Trace, StoreJob
  std::optional<int64_t> session_id;  // Store: the stored id; none = the newest
  uint64_t live_id = 0;               // Live: SessionRegistry id; Attached: AttachedSessions id
  std::string job_id;                 // StoreJob: the sessions' "job_id" metadata (RT_LAUNCH_JOB_ID); AttachedJob: the job
  std::optional<int> restart_count;   // StoreJob: which run of the job; none = the latest
};

SessionSource parse_store_argument(std::string_view argument);
std::shared_ptr<const prof::SessionData> load_session(const SessionSource& source);
std::string describe(const SessionSource& source);

}  // namespace rt::studio
