#include "rt/op_origin.h"

#include <map>
#include <mutex>

#include "rt/error.h"

namespace rt {
namespace {

std::mutex g_mu;
std::map<std::string, std::string, std::less<>>& origins() {
  static auto* m = new std::map<std::string, std::string, std::less<>>;  // leaked: ops may run during exit
  return *m;
}

}  // namespace

void set_op_origin(std::string_view op_name, std::string_view origin) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto [it, inserted] = origins().try_emplace(std::string(op_name), origin);
  if (!inserted && it->second != origin)
    throw ValueError("set_op_origin: op '" + std::string(op_name) + "' comes from '" + it->second +
                     "' already, not '" + std::string(origin) + "'");
}

std::string op_origin(std::string_view op_name) {
  std::lock_guard<std::mutex> lk(g_mu);
  auto it = origins().find(op_name);
  return it == origins().end() ? std::string() : it->second;
}

std::vector<std::pair<std::string, std::string>> op_origins() {
  std::lock_guard<std::mutex> lk(g_mu);
  return {origins().begin(), origins().end()};
}

}  // namespace rt
