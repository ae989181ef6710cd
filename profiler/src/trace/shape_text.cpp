#include "trace/shape_text.h"

namespace rt::prof::trace {
namespace {

void skip_spaces(std::string_view t, size_t& i) {
  while (i < t.size() && t[i] == ' ') ++i;
}

bool parse_list(std::string_view t, size_t& i, int depth) {
  if (depth > 32 || i >= t.size() || t[i] != '[') return false;
  ++i;
  skip_spaces(t, i);
  if (i < t.size() && t[i] == ']') { ++i; return true; }
  while (true) {
    skip_spaces(t, i);
    if (i >= t.size()) return false;
    if (t[i] == '[') {
      if (!parse_list(t, i, depth + 1)) return false;
    } else {
      if (t[i] == '-') ++i;
      if (i >= t.size() || t[i] < '0' || t[i] > '9') return false;
      if (t[i] == '0' && i + 1 < t.size() && t[i + 1] >= '0' && t[i + 1] <= '9') return false;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    }
    skip_spaces(t, i);
    if (i >= t.size()) return false;
    if (t[i] == ']') { ++i; return true; }
    if (t[i] != ',') return false;
    ++i;
  }
}

}  // namespace

bool is_shape_list(std::string_view text) {
  size_t i = 0;
  return parse_list(text, i, 0) && i == text.size();
}

bool split_type_list(std::string_view text, std::vector<std::string_view>& items) {
  items.clear();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  const std::string_view body = text.substr(1, text.size() - 2);
  if (body.find_first_of("[]\"\\") != std::string_view::npos) return false;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view item = body.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty() && !(items.empty() && comma == body.size())) return false;
    if (!item.empty()) items.push_back(item);
    pos = comma + 1;
  }
  return true;
}

}  // namespace rt::prof::trace
