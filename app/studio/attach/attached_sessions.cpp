#include "attach/attached_sessions.h"

#include <fmt/format.h>

#include <algorithm>

#include "rt/error.h"

namespace rt::studio {

AttachedSessions& AttachedSessions::instance() {
  static AttachedSessions sessions;
  return sessions;
}

AttachedSessions::~AttachedSessions() { clear(); }

std::shared_ptr<AttachedJob> AttachedSessions::attach(std::shared_ptr<const AttachHost> host, const JobListing& job,
                                                      AttachedJob::Options options) {
  std::vector<std::shared_ptr<AttachedJob>> replaced;  // destroyed after the lock
  std::lock_guard lock(mu_);
  for (const Entry& e : entries_)
    if (e.job->job() == job.job && e.job->host_name() == job.host && !e.job->finished())
      throw rt::ValueError(fmt::format("job '{}' is attached already; detach it before attaching it again", job.job));
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->job->job() == job.job && it->job->host_name() == job.host) {
      replaced.push_back(std::move(it->job));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  Entry e;
  e.job = std::make_shared<AttachedJob>(std::move(host), job, options);
  e.first_id = next_id_;
  next_id_ += std::max<size_t>(1, job.ranks.size());
  entries_.push_back(e);
  ++joins_;
  trim_ended();
  return e.job;
}

void AttachedSessions::detach(const std::string& job) {
  std::lock_guard lock(mu_);
  for (const Entry& e : entries_)
    if (e.job->job() == job) e.job->request_detach();
}

void AttachedSessions::forget(const std::string& job) {
  std::vector<Entry> gone;
  {
    std::lock_guard lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->job->job() == job) {
        it->job->request_detach();
        gone.push_back(std::move(*it));
        it = entries_.erase(it);
        ++joins_;
      } else {
        ++it;
      }
    }
  }
}

void AttachedSessions::clear() {
  std::vector<Entry> gone;
  {
    std::lock_guard lock(mu_);
    for (Entry& e : entries_) e.job->request_detach();
    gone.swap(entries_);
    ++joins_;
  }
}

void AttachedSessions::trim_ended() {
  size_t ended = 0;
  for (const Entry& e : entries_) ended += e.job->finished() ? 1 : 0;
  for (auto it = entries_.begin(); it != entries_.end() && ended > kKeepEnded;) {
    if (it->job->finished()) {
      it = entries_.erase(it);
      --ended;
    } else {
      ++it;
    }
  }
}

std::shared_ptr<AttachedJob> AttachedSessions::find(const std::string& job) const {
  std::lock_guard lock(mu_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->job->job() == job) return it->job;
  return nullptr;
}

std::vector<AttachedSessionInfo> AttachedSessions::list() const {
  std::lock_guard lock(mu_);
  std::vector<AttachedSessionInfo> out;
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    for (size_t i = 0; i < it->job->rank_count(); ++i) {
      const RankState s = it->job->rank_state(i);
      AttachedSessionInfo info;
      info.id = it->first_id + i;
      info.job = it->job->job();
      info.rank = s.manifest.rank;
      info.name = fmt::format("{} rank {} (attached)", info.job, info.rank);
      info.phase = s.phase;
      info.message = s.message;
      info.ops = s.counts.ops;
      info.dropped = s.dropped;
      out.push_back(std::move(info));
    }
  }
  return out;
}

std::optional<AttachedSessionInfo> AttachedSessions::info(uint64_t id) const {
  for (AttachedSessionInfo& i : list())
    if (i.id == id) return std::move(i);
  return std::nullopt;
}

std::optional<prof::SessionDelta> AttachedSessions::read_since(uint64_t id, const prof::SnapshotCursor& cursor) const {
  std::shared_ptr<AttachedJob> job;
  size_t index = 0;
  {
    std::lock_guard lock(mu_);
    for (const Entry& e : entries_)
      if (id >= e.first_id && id < e.first_id + e.job->rank_count()) {
        job = e.job;
        index = size_t(id - e.first_id);
      }
  }
  if (!job) return std::nullopt;
  return job->mirror(index).read_since(cursor);
}

uint64_t AttachedSessions::generation() const {
  std::lock_guard lock(mu_);
  uint64_t g = joins_ << 32;
  for (const Entry& e : entries_) g += e.job->generation();
  return g;
}

}  // namespace rt::studio
