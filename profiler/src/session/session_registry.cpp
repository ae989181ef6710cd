#include "rt/prof/session_registry.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "rt/error.h"
#include "session/session_header.h"

namespace rt::prof {

SessionRegistry& SessionRegistry::instance() {
  static auto* registry = new SessionRegistry;  // never destroyed: Sessions may outlive static destruction
  return *registry;
}

uint64_t SessionRegistry::add(const Session& session, int64_t start_ns) {
  std::lock_guard<std::mutex> lk(mu_);
  if (entries_.size() >= kCapacity) {
    // See Note [Registry bounds]: the caller is the one recording session, and it is not listed yet.
    auto victim = std::find_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.session; });
    if (victim == entries_.end()) victim = entries_.begin();
    entries_.erase(victim);
  }
  Entry e;
  e.id = next_id_++;
  e.name = session.options().name.empty() ? "session " + std::to_string(e.id) : session.options().name;
  e.start_ns = start_ns;
  e.session = &session;
  e.store_path = session.options().store_path;
  entries_.push_back(std::move(e));
  ++generation_;
  return entries_.back().id;
}

void SessionRegistry::retire(const Session& session, SessionData&& final_data,
                             const SnapshotCursor& final_cursor) noexcept {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.session == &session; });
  if (it == entries_.end()) return;
  if (keep_finished_ == 0) {  // nobody shows finished sessions: free them with the Session
    entries_.erase(it);
    ++generation_;
    return;
  }
  const size_t records = final_data.ops.size() + final_data.gpu.size() + final_data.collectives.size() +
                         final_data.memory.size() +
                         final_data.counters.size() + final_data.steps.size() +
                         final_data.gradient_histograms.size();
  try {
    if (records > kKeepRecords) throw std::length_error("too big to keep");
    it->counts = session.counts();
    it->store_session_id = session.store_session_id();
    it->kept = std::make_shared<const SessionData>(std::move(final_data));
    it->kept_cursor = final_cursor;
  } catch (...) {  // too big, or out of memory: nothing to keep
    entries_.erase(it);
    ++generation_;
    return;
  }
  it->session = nullptr;
  trim_finished();
  ++generation_;
}

void SessionRegistry::keep_finished(size_t n) {
  std::lock_guard<std::mutex> lk(mu_);
  keep_finished_ = std::min(n, kCapacity);
  trim_finished();
  ++generation_;
}

size_t SessionRegistry::kept_finished_limit() const {
  std::lock_guard<std::mutex> lk(mu_);
  return keep_finished_;
}

void SessionRegistry::trim_finished() {
  size_t kept = size_t(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.session; }));
  for (auto it = entries_.begin(); it != entries_.end() && kept > keep_finished_;) {
    if (it->session) {
      ++it;
      continue;
    }
    it = entries_.erase(it);
    --kept;
  }
}

std::vector<RegisteredSession> SessionRegistry::list() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<RegisteredSession> out;
  out.reserve(entries_.size());
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    RegisteredSession r;
    r.id = it->id;
    r.name = it->name;
    r.start_ns = it->start_ns;
    r.store_path = it->store_path;
    if (it->session) {
      r.recording = it->session->recording();
      r.counts = it->session->counts();
      r.store_session_id = it->session->store_session_id();
    } else {
      r.alive = false;
      r.counts = it->counts;
      r.store_session_id = it->store_session_id;
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::shared_ptr<const SessionData> SessionRegistry::snapshot(uint64_t id) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; });
  if (it == entries_.end()) return nullptr;
  if (it->session) return std::make_shared<const SessionData>(it->session->snapshot());
  return it->kept;
}

std::optional<SessionDelta> SessionRegistry::read_since(uint64_t id, const SnapshotCursor& cursor) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.id == id; });
  if (it == entries_.end()) return std::nullopt;
  if (it->session) return it->session->snapshot_since(cursor);
  if (cursor.session != 0 && cursor.session != it->kept_cursor.session)
    throw rt::ValueError(
        "SessionRegistry::read_since: the cursor belongs to another session; pass a default "
        "SnapshotCursor to read session " +
        std::to_string(id) + " from the start");
  SessionDelta out;
  out.cursor = it->kept_cursor;
  const SessionData& kept = *it->kept;
  if (cursor != it->kept_cursor) {
    out.reset = true;
    out.records = kept;
    return out;
  }
  SessionData& r = out.records;  // nothing new: the header and threads only
  copy_session_header(kept, r);
  out.first_new_string = StringId(kept.strings.size());
  return out;
}

uint64_t SessionRegistry::generation() const {
  std::lock_guard<std::mutex> lk(mu_);
  return generation_;
}

}  // namespace rt::prof
