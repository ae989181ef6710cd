// rt/prof/session_delta.h — reading a recording session piece by piece: each read returns only the records
// drained since the previous one, so a live view's refresh costs what arrived, not the whole session
// (Perfetto's and Tracy's live views work the same way).
//
//   rt::prof::SnapshotCursor cursor;                  // default: nothing read yet, the first read is a reset
//   auto data = std::make_shared<rt::prof::SessionData>();
//   // every refresh, on the thread that owns `data`:
//   rt::prof::SessionDelta delta = session.snapshot_since(cursor);   // or SessionRegistry::read_since(id, cursor)
//   cursor = delta.cursor;
//   if (delta.reset) {                                // everything, as snapshot() returns it
//     *data = std::move(delta.records);
//     rebuild_views(data);
//   } else {
//     const rt::prof::SessionGrowth grown = rt::prof::append_delta(*data, std::move(delta));
//     if (grown.any()) views.append(grown);           // e.g. rt::viz::TimelineModel::append
//   }
//
// Contracts
// - A cursor is opaque: pass back the one the previous read returned, to the same session. A default cursor
//   reads everything. A cursor of another session, or one claiming more records than the session has, throws
//   rt::ValueError.
// - A read is thread-safe like Session::snapshot() (it drains every thread's buffer first) and copies only
//   what the cursor has not seen. See Note [Delta cursor] in profiler/src/session/session.cpp for why it
//   counts records in drain order.
// - reset: `records` is the whole session exactly as snapshot() returns it (strings included), and the
//   reader replaces what it holds. A read resets for a default cursor, and once after stop(): stop() sorts the
//   session's records by time, so a cursor taken while recording no longer applies (the stopped session's
//   GPU activity also arrives then). A session with SessionOptions::sort_at_stop = false does not sort, and
//   the read after its stop() is an increment (its GPU activity, if any, in it). Every other read is an increment: after a reset, reads with its cursor
//   are increments again (empty ones once the session stopped).
// - increment: `records` holds the header (name, times, complete, dropped_records, metadata) and every thread
//   record, whole; the ops, GPU activities, collectives, memory events, counters and gradient histograms drained
//   since the cursor, each kind sorted as snapshot() sorts it (ops by start, then thread, then depth; the others
//   by time, the collectives by start_ns); the steps that
//   ended since the cursor, then (while recording, with keep_in_memory) the step still open, ending now, as
//   snapshot() lists it. Record StringIds are the session's: `records.strings` is unused (only ""); the
//   strings interned since the cursor come in `new_strings`, ids first_new_string, first_new_string + 1, ...
//   graphs_changed: `records.graphs` replaces every graph read before (a backward's graph was captured).
//   replaces_open_step: the last step of the previous read was the open one; it is dropped before the new
//   steps are appended (its end has moved, or it has closed).
// - Concatenated (append_delta), the increments hold the same records as snapshot() at the same moment, each
//   exactly once, with each kind in the order of its reads: the records of one read are sorted, a later read's
//   come after them (an op read late may start before ops read earlier).
// - append_delta applies an increment to data that holds everything read before with the same cursor chain
//   (a reset's records plus every later increment). It throws rt::ValueError, before changing anything, for
//   a reset delta (replace the data instead) and when `into` does not end where the delta continues it (its
//   string count, or no step to replace); a new string `into` already holds (a delta of another chain) also
//   throws, possibly after some strings were added: reload the session then.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/prof/events.h"

RT_API_BEGIN

namespace rt::prof {

// Where a reader stands in one session: what it has been given so far. Opaque (see the contracts above).
struct SnapshotCursor {
  uint64_t session = 0;  // the session's serial number in this process; 0: nothing read
  uint64_t layout = 0;   // bumped when the session reorders its records (stop() sorts them)
  uint64_t ops = 0;      // records read so far, counted in drain order
  uint64_t gpu = 0;
  uint64_t collectives = 0;
  uint64_t memory = 0;
  uint64_t counters = 0;
  uint64_t closed_steps = 0;
  uint64_t strings = 0;
  uint64_t graphs_kept = 0;   // SessionData::graphs of the session when read
  uint64_t latest_graph = 0;  // the version of the session's latest backward graph when read
  bool open_step = false;     // the read ended its steps with the step still open
  uint64_t gradient_histograms = 0;
  bool operator==(const SnapshotCursor&) const = default;
};

struct SessionDelta {
  SnapshotCursor cursor;  // pass it to the next read
  bool reset = false;     // records is the whole session: replace, do not append
  SessionData records;
  StringId first_new_string = 0;  // increments: the id of new_strings[0]
  std::vector<std::string> new_strings;
  bool graphs_changed = false;      // increments: records.graphs replaces the graphs read before
  bool replaces_open_step = false;  // increments: drop the last step read before appending records.steps
};

// What append_delta changed: records at these indexes and after are new (steps: new or replaced); the
// views read them. Each equals the size of its vector before the append (steps: after dropping the open step).
struct SessionGrowth {
  size_t ops = 0;
  size_t gpu = 0;
  size_t collectives = 0;
  size_t memory = 0;
  size_t counters = 0;
  size_t steps = 0;
  size_t strings = 0;
  size_t gradient_histograms = 0;
  bool threads_changed = false;
  bool graphs_changed = false;
  bool records_changed = false;  // any record, step or graph above changed
  bool any() const { return records_changed || threads_changed; }
};

// Appends an increment to `into` (see the contracts above); returns where each kind grew.
SessionGrowth append_delta(SessionData& into, SessionDelta&& delta);

}  // namespace rt::prof

RT_API_END
