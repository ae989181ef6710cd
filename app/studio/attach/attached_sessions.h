// app/studio/attach/attached_sessions.h — the jobs the studio is attached to, as sessions the visualizer panels'
// session pickers list next to the sessions recorded in this process (rt/prof/session_registry.h): one entry
// per rank, "JOB rank N (attached)", read piece by piece while it grows.
//
//   AttachedSessions& attached = AttachedSessions::instance();
//   std::shared_ptr<AttachedJob> job = attached.attach(host, listing);   // the Attach dialog's Attach button
//   for (const AttachedSessionInfo& s : attached.list())                 // newest job first, ranks in order
//     std::printf("%s  %s\n", s.name.c_str(), phase_text(s.phase));
//   if (auto delta = attached.read_since(id, cursor)) ...                // as SessionRegistry::read_since
//   attached.detach(job->job());                                         // its sessions stay, "detached"
//
// Contracts
// - attach() starts an AttachedJob (it connects on its worker thread) and returns it; the job's ranks are
//   listed at once, each with an id that is never reused. Attaching a job that is attached and not finished
//   throws rt::ValueError naming it (detach it first); one that finished is replaced by the new attachment.
// - detach() asks the job's worker to close (no waiting); its sessions stay listed with what they received.
//   At most kKeepEnded finished jobs stay listed, the oldest leave first; forget() drops one at once.
// - list(), read_since(), find() and generation() are thread-safe and never do I/O. read_since returns nullopt
//   once the id left the list and throws rt::ValueError for a cursor of another reader (SessionMirror).
// - generation() changes when a job joins or leaves and whenever one of them changed (AttachedJob::generation).
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attach/attached_job.h"
#include "rt/prof/session_delta.h"

namespace rt::studio {

struct AttachedSessionInfo {
  uint64_t id = 0;
  std::string name;  // "JOB rank N (attached)"
  std::string job;
  int rank = 0;
  RankPhase phase = RankPhase::Connecting;
  std::string message;  // why it ended, when it says
  size_t ops = 0;
  uint64_t dropped = 0;
};

class AttachedSessions {
 public:
  static constexpr size_t kKeepEnded = 4;

  static AttachedSessions& instance();

  std::shared_ptr<AttachedJob> attach(std::shared_ptr<const AttachHost> host, const JobListing& job,
                                      AttachedJob::Options options = {});
  void detach(const std::string& job);
  void forget(const std::string& job);
  void clear();  // detaches and forgets every job (joins their workers: bounded by their timeouts)

  std::shared_ptr<AttachedJob> find(const std::string& job) const;
  std::vector<AttachedSessionInfo> list() const;
  std::optional<AttachedSessionInfo> info(uint64_t id) const;
  std::optional<prof::SessionDelta> read_since(uint64_t id, const prof::SnapshotCursor& cursor) const;
  uint64_t generation() const;

  AttachedSessions() = default;
  ~AttachedSessions();
  AttachedSessions(const AttachedSessions&) = delete;
  AttachedSessions& operator=(const AttachedSessions&) = delete;

 private:
  struct Entry {
    std::shared_ptr<AttachedJob> job;
    uint64_t first_id = 0;  // rank i has id first_id + i
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // oldest first
  uint64_t next_id_ = 1;
  uint64_t joins_ = 0;          // bumped when an entry joins or leaves

  void trim_ended();            // with mu_ held
};

}  // namespace rt::studio
