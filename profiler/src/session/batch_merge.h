// Folds a drained batch of records, interned in its own StringTable, into a session's data.
#pragma once
#include "rt/prof/events.h"

namespace rt::prof::session {

// Appends `batch`'s records and steps to `into` (only when keep_records), re-interning their
// strings in into.strings; always merges threads (a known thread's name is refreshed),
// metadata and dropped_records. Header times are left alone.
// Afterwards batch.threads holds only the threads `into` did not know before: what a store
// that was sent every earlier batch has not seen yet.
void merge_batch(SessionData& into, SessionData& batch, bool keep_records);

// True when the batch carries nothing a store would need to write.
bool batch_is_empty(const SessionData& batch);

}  // namespace rt::prof::session
