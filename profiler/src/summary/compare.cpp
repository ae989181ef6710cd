#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>
#include <map>

#include "rt/prof/summary.h"

namespace rt::prof {
namespace {

double ratio(int64_t a, int64_t b) {
  if (a == 0) return b == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return double(b) / double(a);
}

std::string format_ratio(double r) { return r == std::numeric_limits<double>::infinity() ? "new" : fmt::format("{:.2f}x", r); }

std::string signed_time(int64_t ns) { return (ns < 0 ? "-" : "+") + format_time_ns(std::llabs(ns)); }

}  // namespace

double OpComparison::total_ratio() const { return ratio(total_ns_a, total_ns_b); }
double OpComparison::self_ratio() const { return ratio(self_ns_a, self_ns_b); }

std::vector<OpComparison> compare_sessions(const SessionData& a, const SessionData& b) {
  std::map<std::string, OpComparison> by_name;
  for (const OpStats& s : key_averages(a)) {
    OpComparison& c = by_name[s.name];
    c.calls_a = s.calls;
    c.total_ns_a = s.total_ns;
    c.self_ns_a = s.self_ns;
  }
  for (const OpStats& s : key_averages(b)) {
    OpComparison& c = by_name[s.name];
    c.calls_b = s.calls;
    c.total_ns_b = s.total_ns;
    c.self_ns_b = s.self_ns;
  }
  std::vector<OpComparison> out;
  for (auto& [name, c] : by_name) {
    c.name = name;
    out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const OpComparison& x, const OpComparison& y) {
    const int64_t dx = std::llabs(x.total_delta_ns()), dy = std::llabs(y.total_delta_ns());
    if (dx != dy) return dx > dy;
    return std::llabs(x.self_delta_ns()) > std::llabs(y.self_delta_ns());
  });
  return out;
}

std::string format_comparison(const std::vector<OpComparison>& rows, int row_limit) {
  size_t name_width = 4;
  for (const OpComparison& c : rows) name_width = std::max(name_width, std::min<size_t>(c.name.size(), 55) + 4);
  std::string out;
  const std::string header = fmt::format("{:>{}}  {:>10}  {:>10}  {:>12}  {:>12}  {:>12}  {:>8}  {:>12}  {:>12}  {:>12}\n",
                                         "Name", name_width, "Calls A", "Calls B", "Total A", "Total B", "Delta",
                                         "Ratio", "Self A", "Self B", "Self delta");
  const std::string sep(header.size() - 1, '-');
  out += sep + "\n" + header + sep + "\n";
  int shown = 0;
  for (const OpComparison& c : rows) {
    if (row_limit >= 0 && shown++ == row_limit) break;
    const std::string name = c.name.size() > 52 ? c.name.substr(0, 52) + "..." : c.name;
    out += fmt::format("{:>{}}  {:>10}  {:>10}  {:>12}  {:>12}  {:>12}  {:>8}  {:>12}  {:>12}  {:>12}\n", name,
                       name_width, c.calls_a, c.calls_b, format_time_ns(c.total_ns_a), format_time_ns(c.total_ns_b),
                       signed_time(c.total_delta_ns()), format_ratio(c.total_ratio()), format_time_ns(c.self_ns_a),
                       format_time_ns(c.self_ns_b), signed_time(c.self_delta_ns()));
  }
  return out + sep + "\n";
}

}  // namespace rt::prof
