// The store's schema: versioned migration steps and the indexes finish() builds.
// See docs/store-schema.md; every change here is a new migration step there too.
#pragma once
#include <cstdint>
#include <span>

namespace rt::prof::sqlite { class Connection; }

namespace rt::prof::schema {

// Every row id (and StringIds id) is sessionId * 2^40 + a per-session number, so a session's
// rows are one contiguous range of each table's primary key. See Note [Row ids].
inline constexpr int kSessionShift = 40;
inline constexpr int64_t session_base(int64_t session) { return session << kSessionShift; }
inline constexpr int64_t session_end(int64_t session) { return session_base(session + 1); }
inline constexpr uint32_t local_id(int64_t id) { return uint32_t(id & ((int64_t(1) << kSessionShift) - 1)); }

inline constexpr int64_t kApplicationId = 0x52545052;  // 'RTPR' in the file header

struct Migration {
  int version;        // user_version after this step
  const char* what;
  const char* sql;
};

std::span<const Migration> migrations();
std::span<const char* const> query_indexes();  // CREATE INDEX IF NOT EXISTS statements

// Sets WAL and the connection pragmas, checks the file is ours and not newer, and applies the
// missing migration steps in order, each in its own transaction. Throws StoreError.
void prepare(sqlite::Connection& db);

}  // namespace rt::prof::schema
