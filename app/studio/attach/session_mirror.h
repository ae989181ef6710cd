// app/studio/attach/session_mirror.h — a copy of a session that grows on one thread (the attach worker, which
// mirrors a remote rank with rt::remote::AgentClient) and is read piece by piece on others (each visualizer
// panel's session picker), exactly as rt::prof::SessionRegistry::read_since reads a session of this process.
//
//   SessionMirror mirror;
//   // worker thread, after the client applied event batches:
//   mirror.publish(client.session(), client.resets());
//   // GUI thread, every refresh, with its own cursor and data (rt/prof/session_delta.h):
//   rt::prof::SessionDelta delta = mirror.read_since(cursor);
//   cursor = delta.cursor;
//   if (delta.reset) data = std::move(delta.records); else rt::prof::append_delta(data, std::move(delta));
//
// Contracts
// - publish(grown, resets): `grown` is the source's data, which only grows between resets the way
//   rt::prof::append_delta grows data (records and strings appended, the last step replaced, graphs, threads and
//   the header replaced); `resets` counts the times the source replaced its data (AgentClient::resets()). The
//   mirror copies what is new since the previous publish, under its lock: the lock is held for the copy of the
//   new records only, never for I/O. A changed `resets` (or a source smaller than the mirror) copies it whole.
// - read_since(cursor) is thread-safe and copies only what the cursor has not seen. A default cursor, or one of
//   an earlier reset, reads a reset (the whole mirror). Otherwise an increment as session_delta.h describes:
//   the header and threads whole, the records and strings after the cursor, the last step read again
//   (replaces_open_step) whenever anything changed, graphs when they changed; an empty increment when
//   nothing was published since. A cursor claiming more than the mirror holds throws rt::ValueError.
// - The cursor is opaque (a rt::prof::SnapshotCursor whose fields count the mirror's records).
#pragma once
#include <cstdint>
#include <mutex>

#include "rt/prof/events.h"
#include "rt/prof/session_delta.h"

namespace rt::studio {

class SessionMirror {
 public:
  void publish(const prof::SessionData& grown, uint64_t resets);
  prof::SessionDelta read_since(const prof::SnapshotCursor& cursor) const;

  // Counts of what the mirror holds now (for status lines).
  struct Counts {
    size_t ops = 0, memory = 0, steps = 0;
    int64_t last_step_ns = -1;  // the last finished step's duration; -1 when none finished yet
    bool complete = false;
  };
  Counts counts() const;

 private:
  mutable std::mutex mu_;
  prof::SessionData data_;
  uint64_t serial_ = 1;        // bumped at every reset of the mirror (cursor.session)
  uint64_t version_ = 0;       // bumped at every publish that changed something (cursor.layout)
  uint64_t graph_version_ = 0; // bumped when the graphs changed (cursor.latest_graph)
  uint64_t source_resets_ = 0;
};

}  // namespace rt::studio
