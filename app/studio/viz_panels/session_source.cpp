#include "viz_panels/session_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "attach/attached_sessions.h"
#include "rt/error.h"
#include "rt/prof/chrome_trace.h"
#include "rt/prof/rank_merge.h"
#include "rt/prof/session_registry.h"
#include "rt/prof/store.h"

namespace rt::studio {

SessionSource parse_store_argument(std::string_view argument) {
  SessionSource s;
  s.kind = SessionSource::Kind::Store;
  if (const size_t job = argument.rfind(":job="); job != std::string_view::npos) {
    s.kind = SessionSource::Kind::StoreJob;
    s.path = std::string(argument.substr(0, job));
    s.job_id = std::string(argument.substr(job + 5));
    if (s.path.empty() || s.job_id.empty())
      throw rt::ValueError(fmt::format("'{}' names no job: pass DB:job=ID (a store and a launch job id, as "
                                       "`rtorch trace list DB` shows in each rank's session)", argument));
    return s;
  }
  const size_t colon = argument.rfind(':');
  if (colon != std::string_view::npos && colon + 1 < argument.size()) {
    const std::string_view tail = argument.substr(colon + 1);
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), id);
    if (ec == std::errc() && end == tail.data() + tail.size()) {
      if (id <= 0) throw rt::ValueError(fmt::format("session id {} in '{}' must be positive", id, argument));
      s.path = std::string(argument.substr(0, colon));
      s.session_id = id;
      return s;
    }
  }
  if (argument.empty()) throw rt::ValueError("no store given: pass DB or DB:N (a SQLite store and a session id)");
  s.path = std::string(argument);
  return s;
}

namespace {

std::shared_ptr<const prof::SessionData> load_store(const SessionSource& s) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.path, ec))
    throw rt::ValueError(fmt::format("cannot open store '{}': no such file", s.path.string()));
  try {
    prof::Store store = prof::Store::open(s.path);
    const auto sessions = store.list_sessions();
    if (sessions.empty())
      throw rt::ValueError(fmt::format("store '{}' holds no sessions (record one with rtorch run --profile or "
                                       "rt.profiler.profile(store=...))", s.path.string()));
    int64_t id = 0;
    if (s.session_id) {
      const bool known = std::any_of(sessions.begin(), sessions.end(),
                                     [&](const prof::SessionInfo& i) { return i.id == *s.session_id; });
      if (!known)
        throw rt::ValueError(fmt::format("store '{}' has no session {}; list its sessions with `rtorch trace list {}`",
                                         s.path.string(), *s.session_id, s.path.string()));
      id = *s.session_id;
    } else {
      id = std::max_element(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) { return a.id < b.id; })->id;
    }
    return std::make_shared<const prof::SessionData>(store.load_session(id));
  } catch (const prof::StoreError& e) {
    throw rt::ValueError(fmt::format("cannot read store '{}': {}", s.path.string(), e.what()));
  }
}

std::shared_ptr<const prof::SessionData> load_store_job(const SessionSource& s) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.path, ec))
    throw rt::ValueError(fmt::format("cannot open store '{}': no such file", s.path.string()));
  try {
    prof::Store store = prof::Store::open(s.path);
    const std::vector<prof::LaunchJob> jobs = prof::launch_jobs(store.list_sessions());
    const prof::LaunchJob* chosen = nullptr;
    std::string known;
    for (const prof::LaunchJob& j : jobs) {
      if (known.find(j.job_id) == std::string::npos) known += (known.empty() ? "" : ", ") + j.job_id;
      if (j.job_id != s.job_id) continue;
      if (s.restart_count ? j.restart_count == *s.restart_count : (!chosen || j.restart_count > chosen->restart_count))
        chosen = &j;
    }
    if (!chosen)
      throw rt::ValueError(fmt::format(
          "store '{}' holds no session of job {}{} (jobs in it: {})", s.path.string(), s.job_id,
          s.restart_count ? fmt::format(" restart {}", *s.restart_count) : std::string(),
          known.empty() ? "none; record one with rtorch launch --store" : known));
    std::vector<prof::RankSession> ranks;
    for (const prof::LaunchJobRank& r : chosen->ranks) ranks.push_back({r.rank, store.load_session(r.session_id)});
    return std::make_shared<const prof::SessionData>(prof::merge_rank_sessions(std::move(ranks)));
  } catch (const prof::StoreError& e) {
    throw rt::ValueError(fmt::format("cannot read store '{}': {}", s.path.string(), e.what()));
  }
}

}  // namespace

std::shared_ptr<const prof::SessionData> load_session(const SessionSource& s) {
  switch (s.kind) {
    case SessionSource::Kind::Store: return load_store(s);
    case SessionSource::Kind::StoreJob: return load_store_job(s);
    case SessionSource::Kind::Trace: {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(s.path, ec))
        throw rt::ValueError(fmt::format("cannot open trace '{}': no such file", s.path.string()));
      try {
        prof::ChromeImport imported = prof::import_chrome_trace(s.path);
        if (imported.session.name.empty()) imported.session.name = s.path.filename().string();
        return std::make_shared<const prof::SessionData>(std::move(imported.session));
      } catch (const prof::TraceError& e) {
        throw rt::ValueError(fmt::format("cannot read trace '{}': {}", s.path.string(), e.what()));
      }
    }
    case SessionSource::Kind::Live: {
      auto data = prof::SessionRegistry::instance().snapshot(s.live_id);
      if (!data)
        throw rt::ValueError(fmt::format("live session {} is no longer kept (only the last {} sessions of this "
                                         "process are)", s.live_id, prof::SessionRegistry::kCapacity));
      return data;
    }
    case SessionSource::Kind::Attached: {
      auto delta = AttachedSessions::instance().read_since(s.live_id, prof::SnapshotCursor{});
      if (!delta)
        throw rt::ValueError(fmt::format("attached session {} is no longer listed (the studio keeps the last {} "
                                         "detached jobs)", s.live_id, AttachedSessions::kKeepEnded));
      return std::make_shared<const prof::SessionData>(std::move(delta->records));
    }
    case SessionSource::Kind::AttachedJob: {
      const auto job = AttachedSessions::instance().find(s.job_id);
      if (!job) throw rt::ValueError(fmt::format("job {} is no longer attached", s.job_id));
      return std::make_shared<const prof::SessionData>(merge_attached_ranks(*job));
    }
  }
  throw rt::ValueError("unknown session source");
}

std::string describe(const SessionSource& s) {
  switch (s.kind) {
    case SessionSource::Kind::Store:
      return s.session_id ? fmt::format("{} #{}", s.path.filename().string(), *s.session_id)
                          : s.path.filename().string() + " (newest)";
    case SessionSource::Kind::Trace: return s.path.filename().string();
    case SessionSource::Kind::StoreJob:
      return fmt::format("{} job {}{}", s.path.filename().string(), s.job_id,
                         s.restart_count ? fmt::format(" restart {}", *s.restart_count) : std::string());
    case SessionSource::Kind::Live: return fmt::format("live session {}", s.live_id);
    case SessionSource::Kind::Attached: return fmt::format("attached session {}", s.live_id);
    case SessionSource::Kind::AttachedJob: return fmt::format("attached job {}", s.job_id);
  }
  return {};
}

}  // namespace rt::studio
