// PrefixStore: forwards every call to its base store with "<prefix>/" in front of each key.
#include <fmt/core.h>

#include "rt/dist/store.h"
#include "rt/error.h"
#include "store/store_checks.h"

namespace rt::dist {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base) : prefix_(std::move(prefix)), base_(std::move(base)) {
  if (!base_) throw ValueError(fmt::format("PrefixStore '{}': the base store is null. Hint: pass the store to wrap", prefix_));
  timeout_ = base_->timeout();
}

std::string PrefixStore::prefixed(const std::string& key) const {
  if (key.empty()) detail::check_key(describe(), "a store operation", key);
  return prefix_ + "/" + key;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { base_->set(prefixed(key), value); }
Bytes PrefixStore::get(const std::string& key) {
  // The base's own timeout governs its get; ours is the one this store was given.
  base_->wait({prefixed(key)}, timeout());
  return base_->get(prefixed(key));
}
int64_t PrefixStore::add(const std::string& key, int64_t delta) { return base_->add(prefixed(key), delta); }
Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return base_->compare_set(prefixed(key), expected, desired);
}
bool PrefixStore::check(const std::vector<std::string>& keys) {
  std::vector<std::string> p;
  p.reserve(keys.size());
  for (const auto& k : keys) p.push_back(prefixed(k));
  return base_->check(p);
}
void PrefixStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  std::vector<std::string> p;
  p.reserve(keys.size());
  for (const auto& k : keys) p.push_back(prefixed(k));
  base_->wait(p, timeout);
}
bool PrefixStore::delete_key(const std::string& key) { return base_->delete_key(prefixed(key)); }
int64_t PrefixStore::num_keys() { return base_->num_keys(); }
std::string PrefixStore::describe() const { return fmt::format("PrefixStore '{}' over {}", prefix_, base_->describe()); }

}  // namespace rt::dist
