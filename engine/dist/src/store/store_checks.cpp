#include "store/store_checks.h"

#include <fmt/core.h>

#include <charconv>
#include <limits>

namespace rt::dist::detail {

void check_key(const std::string& where, const char* op, const std::string& key) {
  if (key.empty())
    throw DistStoreError(fmt::format("{}: {}: the key is empty. Hint: keys are non-empty strings", where, op));
  if (key.size() > kMaxKeyBytes)
    throw DistStoreError(fmt::format("{}: {}: key {} is {} bytes, over the limit of {} bytes (64 KiB). Hint: use a "
                                     "short key and put the data in the value",
                                     where, op, printable(key), key.size(), kMaxKeyBytes));
}

void check_value(const std::string& where, const char* op, const std::string& key, const Bytes& value) {
  if (value.size() > kMaxValueBytes)
    throw DistStoreError(fmt::format("{}: {}: the value for key {} is {} bytes, over the limit of {} bytes (1 GiB). "
                                     "Hint: split it over several keys, or send tensors through a process group",
                                     where, op, printable(key), value.size(), kMaxValueBytes));
}

void check_keys(const std::string& where, const char* op, const std::vector<std::string>& keys) {
  for (const auto& k : keys) check_key(where, op, k);
}

int64_t parse_counter(const std::string& where, const std::string& key, const Bytes& value) {
  const char* first = reinterpret_cast<const char*>(value.data());
  const char* last = first + value.size();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(first, last, v);
  if (value.empty() || ec != std::errc() || end != last)
    throw DistStoreError(fmt::format("{}: add: key {} holds {}, not a decimal integer. Hint: add counts on keys that "
                                     "only add (or set to decimal text) writes; use another key for the counter",
                                     where, printable(key), printable(std::string(first, last))));
  return v;
}

int64_t add_counter(const std::string& where, const std::string& key, int64_t current, int64_t delta) {
  int64_t out = 0;
  if (__builtin_add_overflow(current, delta, &out))
    throw DistStoreError(fmt::format("{}: add: key {} holds {}; adding {} overflows a 64-bit integer", where,
                                     printable(key), current, delta));
  return out;
}

Bytes counter_bytes(int64_t v) {
  std::string s = std::to_string(v);
  return Bytes(s.begin(), s.end());
}

CompareSetOutcome compare_set_outcome(const std::optional<Bytes>& current, const Bytes& expected, const Bytes& desired) {
  if (!current) {
    if (expected.empty()) return {desired, desired};
    return {std::nullopt, expected};
  }
  if (*current == expected) return {desired, desired};
  return {std::nullopt, *current};
}

std::string format_timeout(Milliseconds t) {
  if (t.count() == 0) return "no timeout";
  if (t.count() % 1000 == 0) return fmt::format("{} s", t.count() / 1000);
  return fmt::format("{} ms", t.count());
}

std::string printable(const std::string& bytes, size_t max_chars) {
  std::string out = "'";
  for (size_t i = 0; i < bytes.size() && i < max_chars; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  out += "'";
  if (bytes.size() > max_chars) out += fmt::format(" ({} bytes)", bytes.size());
  return out;
}

std::string format_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i == 8) return out + fmt::format(", ... ({} keys)", keys.size());
    if (i) out += ", ";
    out += printable(keys[i]);
  }
  return out;
}

// Note [Store timeouts]
// A timeout bounds how long get and wait block. Zero means "no timeout" (PyTorch's Store::kNoTimeout);
// a negative timeout is a caller's mistake and is refused rather than read as "fail at once".
std::optional<Clock::time_point> deadline_after(const std::string& where, Milliseconds timeout) {
  if (timeout.count() < 0)
    throw DistStoreError(fmt::format("{}: the timeout is negative ({} ms). Hint: pass a positive timeout, or 0 to "
                                     "wait without one",
                                     where, timeout.count()));
  if (timeout.count() == 0) return std::nullopt;
  return Clock::now() + timeout;
}

void throw_wait_timeout(const std::string& where, const std::vector<std::string>& keys, Milliseconds timeout) {
  throw DistStoreError(fmt::format("{}: timed out after {} waiting for key{} {}. Hint: a rank that should set {} has "
                                   "not reached that point or has died; raise the timeout if it is only slow",
                                   where, format_timeout(timeout), keys.size() == 1 ? "" : "s", format_keys(keys),
                                   keys.size() == 1 ? "it" : "them"));
}

}  // namespace rt::dist::detail
