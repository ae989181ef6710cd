#include "rt/nn/state_dict.h"

#include "rt/error.h"

namespace rt::nn {

StateDict::StateDict(std::initializer_list<Item> items) {
  for (const auto& [k, v] : items) insert(k, v);
}

void StateDict::insert(const std::string& key, Tensor value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    items_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, items_.size());
  items_.emplace_back(key, std::move(value));
}

bool StateDict::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  items_.erase(items_.begin() + std::ptrdiff_t(it->second));
  index_.clear();
  for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  return true;
}

const Tensor& StateDict::at(const std::string& key) const {
  if (const Tensor* t = find(key)) return *t;
  throw IndexError("StateDict: no key '" + key + "' (it holds " + std::to_string(items_.size()) + " entries)");
}

Tensor* StateDict::find(const std::string& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

const Tensor* StateDict::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& it : items_) out.push_back(it.first);
  return out;
}

}  // namespace rt::nn
