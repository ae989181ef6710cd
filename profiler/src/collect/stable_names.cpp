#include "collect/stable_names.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace rt::prof::collect {
namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct NameTable {
  std::mutex mu;
  std::unordered_set<std::string, TextHash, std::equal_to<>> names;  // nodes never move
};
NameTable& name_table() {
  static auto* table = new NameTable;  // leaked: records may name it during static destruction
  return *table;
}

thread_local std::unordered_map<std::string, const char*, TextHash, std::equal_to<>> t_cache;

}  // namespace

const char* stable_name(std::string_view name) {
  if (auto it = t_cache.find(name); it != t_cache.end()) return it->second;
  auto& table = name_table();
  const char* stable = nullptr;
  {
    std::lock_guard<std::mutex> lk(table.mu);
    auto it = table.names.find(name);
    if (it == table.names.end()) it = table.names.emplace(name).first;
    stable = it->c_str();
  }
  t_cache.emplace(std::string(name), stable);
  return stable;
}

}  // namespace rt::prof::collect
