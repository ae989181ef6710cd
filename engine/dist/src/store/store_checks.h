// store_checks.h — what every store shares: the key and value limits, counters as decimal text,
// timeouts and deadlines, and the wording of the errors (see rt/dist/store.h's contracts).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rt/dist/store.h"

namespace rt::dist::detail {

inline constexpr size_t kMaxKeyBytes = size_t(64) << 10;    // 64 KiB
inline constexpr size_t kMaxValueBytes = size_t(1) << 30;   // 1 GiB

using Clock = std::chrono::steady_clock;

// Throw DistStoreError naming the store (`where`), the operation and the limit.
void check_key(const std::string& where, const char* op, const std::string& key);
void check_value(const std::string& where, const char* op, const std::string& key, const Bytes& value);
void check_keys(const std::string& where, const char* op, const std::vector<std::string>& keys);

// The counter a key holds (decimal text, optional '-'); throws DistStoreError when it holds anything else.
int64_t parse_counter(const std::string& where, const std::string& key, const Bytes& value);
// current + delta, throwing DistStoreError on int64 overflow.
int64_t add_counter(const std::string& where, const std::string& key, int64_t current, int64_t delta);
Bytes counter_bytes(int64_t v);

// compare_set on a plain map: see rt/dist/store.h. `current` is the key's value, nullopt when missing.
// Returns {value to store or nullopt when nothing changes, value to return}.
struct CompareSetOutcome {
  std::optional<Bytes> store;
  Bytes result;
};
CompareSetOutcome compare_set_outcome(const std::optional<Bytes>& current, const Bytes& expected, const Bytes& desired);

// "200 ms", "5 s", "no timeout".
std::string format_timeout(Milliseconds t);
// "'a'", "'a', 'b'" (long or binary keys shortened and escaped).
std::string format_keys(const std::vector<std::string>& keys);
std::string printable(const std::string& bytes, size_t max_chars = 64);

// See Note [Store timeouts]: zero waits forever; negative is refused.
std::optional<Clock::time_point> deadline_after(const std::string& where, Milliseconds timeout);

[[noreturn]] void throw_wait_timeout(const std::string& where, const std::vector<std::string>& keys,
                                     Milliseconds timeout);

}  // namespace rt::dist::detail
