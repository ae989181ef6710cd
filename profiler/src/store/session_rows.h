// Reading a session's rows back (shared by Store::load_session and SessionWriter::finish).
#pragma once
#include <cstdint>

#include "rt/prof/events.h"

namespace rt::prof::sqlite { class Connection; }

namespace rt::prof {

// Loads session `id`; throws StoreError naming the store and the sessions it has when missing.
SessionData read_session(sqlite::Connection& db, int64_t id);

// The connection pragmas every store connection sets (WAL itself is a property of the file).
void configure_connection(sqlite::Connection& db);

}  // namespace rt::prof
