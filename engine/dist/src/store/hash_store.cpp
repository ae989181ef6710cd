// HashStore: a map under a mutex; waiters sleep on a condition variable woken by every write.
#include <condition_variable>
#include <mutex>
#include <unordered_map>

#include "rt/dist/store.h"
#include "store/store_checks.h"

namespace rt::dist {

using namespace detail;

struct HashStore::State {
  std::mutex mutex;
  std::condition_variable changed;
  std::unordered_map<std::string, Bytes> map;
};

HashStore::HashStore() : state_(std::make_unique<State>()) {}
HashStore::~HashStore() = default;

void HashStore::set(const std::string& key, const Bytes& value) {
  check_key(describe(), "set", key);
  check_value(describe(), "set", key, value);
  {
    std::lock_guard lock(state_->mutex);
    state_->map[key] = value;
  }
  state_->changed.notify_all();
}

Bytes HashStore::get(const std::string& key) {
  check_key(describe(), "get", key);
  wait({key}, timeout());
  std::lock_guard lock(state_->mutex);
  auto it = state_->map.find(key);
  // Deleted between the wait and the lock: wait again rather than invent a value.
  if (it == state_->map.end()) throw_wait_timeout(describe(), {key}, timeout());
  return it->second;
}

int64_t HashStore::add(const std::string& key, int64_t delta) {
  check_key(describe(), "add", key);
  int64_t result = 0;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->map.find(key);
    int64_t current = it == state_->map.end() ? 0 : parse_counter(describe(), key, it->second);
    result = add_counter(describe(), key, current, delta);
    state_->map[key] = counter_bytes(result);
  }
  state_->changed.notify_all();
  return result;
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_key(describe(), "compare_set", key);
  check_value(describe(), "compare_set", key, expected);
  check_value(describe(), "compare_set", key, desired);
  CompareSetOutcome outcome;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->map.find(key);
    std::optional<Bytes> current;
    if (it != state_->map.end()) current = it->second;
    outcome = compare_set_outcome(current, expected, desired);
    if (outcome.store) state_->map[key] = *outcome.store;
  }
  if (outcome.store) state_->changed.notify_all();
  return outcome.result;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  check_keys(describe(), "check", keys);
  std::lock_guard lock(state_->mutex);
  for (const auto& k : keys)
    if (!state_->map.count(k)) return false;
  return true;
}

void HashStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  check_keys(describe(), "wait", keys);
  auto deadline = deadline_after(describe(), timeout);
  std::unique_lock lock(state_->mutex);
  auto ready = [&] {
    for (const auto& k : keys)
      if (!state_->map.count(k)) return false;
    return true;
  };
  if (!deadline) {
    state_->changed.wait(lock, ready);
  } else if (!state_->changed.wait_until(lock, *deadline, ready)) {
    throw_wait_timeout(describe(), keys, timeout);
  }
}

bool HashStore::delete_key(const std::string& key) {
  check_key(describe(), "delete_key", key);
  std::lock_guard lock(state_->mutex);
  return state_->map.erase(key) > 0;
}

int64_t HashStore::num_keys() {
  std::lock_guard lock(state_->mutex);
  return int64_t(state_->map.size());
}

}  // namespace rt::dist
