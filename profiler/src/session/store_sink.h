// Streams a recording session's batches into a SQLite store (rt/prof/store.h) while it records.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rt/prof/store.h"

namespace rt::prof::session {

// Used by one thread at a time (the session's flush thread, then stop()).
class StoreSink {
 public:
  // Opens (creating or migrating) the store and begins an incomplete session; throws
  // StoreError with the store's message.
  StoreSink(const std::string& path, std::string_view name,
            const std::unordered_map<std::string, std::string>& metadata);

  int64_t session_id() const { return session_id_; }

  // Appends one batch in one transaction. The first failure is kept for finish(); later
  // batches are then counted as lost, not written.
  void write(const SessionData& batch) noexcept;

  // Marks the session complete and builds its indexes. Throws StoreError when a write failed
  // (the stored session stays incomplete) or finishing fails.
  void finish();

 private:
  std::string path_;
  int64_t session_id_ = 0;
  std::optional<SessionWriter> writer_;
  std::string first_error_;
  uint64_t lost_records_ = 0;
};

}  // namespace rt::prof::session
