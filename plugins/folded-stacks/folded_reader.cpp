#include <cstdio>

#include "folded_format.h"

namespace folded {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

// The byte offset (0-based) of the first byte that is not UTF-8 text without control characters (tab allowed),
// or npos.
size_t first_non_text(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) return i;
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    const bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string quoted_prefix(std::string_view s) {
  constexpr size_t kShown = 40;
  std::string out(s.substr(0, kShown));
  if (s.size() > kShown) out += "...";
  return out;
}

// A positive decimal integer of at most `max`, or nullopt.
std::optional<uint64_t> parse_count(std::string_view s, uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = uint64_t(c - '0');
    if (v > (max - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

enum class LineKind { Skip, Stack, Directive };

struct LineResult {
  LineKind kind = LineKind::Skip;
  FoldedLine stack;
  int64_t period_ns = 0;
  std::string error;  // non-empty: the line is not valid
};

LineResult read_line(std::string_view line, size_t number) {
  LineResult r;
  auto fail = [&](std::string message) {
    r.error = std::move(message);
    return r;
  };
  if (line.size() > kMaxLineBytes)
    return fail("the line is " + std::to_string(line.size()) + " bytes long, more than the 1 MiB a folded-stacks "
                "line may have");
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (const size_t bad = first_non_text(line); bad != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", unsigned(static_cast<unsigned char>(line[bad])));
    return fail(std::string("byte ") + hex + " at column " + std::to_string(bad + 1) +
                " is not text; a folded-stacks file is UTF-8 text without control characters");
  }
  const std::string_view body = trim_right(trim_left(line));
  if (body.empty()) return r;
  if (body.front() == '#') {
    if (body.substr(0, kPeriodDirective.size()) != kPeriodDirective) return r;
    const std::string_view value = trim_left(body.substr(kPeriodDirective.size()));
    const std::optional<uint64_t> period = parse_count(value, kMaxCount);
    if (!period || *period == 0)
      return fail("\"# sample_period_ns=\" must be followed by a positive whole number of nanoseconds (got \"" +
                  quoted_prefix(value) + "\")");
    r.kind = LineKind::Directive;
    r.period_ns = int64_t(*period);
    return r;
  }
  const size_t space = body.find_last_of(" \t");
  if (space == std::string_view::npos)
    return fail("no sample count: a line is 'frame;frame;... COUNT' (got \"" + quoted_prefix(body) + "\")");
  const std::string_view count_text = body.substr(space + 1);
  const std::optional<uint64_t> count = parse_count(count_text, kMaxCount);
  if (!count)
    return fail("the count \"" + quoted_prefix(count_text) +
                "\" is not a whole number from 1 to 10^12 (the last field of a line counts its samples)");
  if (*count == 0) return fail("the count is 0; a stack that was seen has a count of 1 or more");
  const std::string_view stack = trim_right(body.substr(0, space));
  if (stack.empty()) return fail("no frames before the count");
  r.stack.count = *count;
  r.stack.line = number;
  size_t begin = 0;
  for (;;) {
    const size_t end = stack.find(';', begin);
    const std::string_view frame = stack.substr(begin, end == std::string_view::npos ? stack.npos : end - begin);
    if (frame.empty())
      return fail("frame " + std::to_string(r.stack.frames.size() + 1) +
                  " is empty (a ';' at the start or the end, or two in a row)");
    if (r.stack.frames.size() == kMaxFrames)
      return fail("the stack is deeper than " + std::to_string(kMaxFrames) + " frames");
    r.stack.frames.push_back(frame);
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  r.kind = LineKind::Stack;
  return r;
}

// Calls `visit(line, number, complete)` for each line of `text`; `complete` is false for a last line without
// a '\n'. Stops when visit returns false.
template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  size_t number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    ++number;
    const size_t end = text.find('\n', begin);
    const bool complete = end != std::string_view::npos;
    const std::string_view line = text.substr(begin, complete ? end - begin : text.npos);
    if (!visit(line, number, complete)) return;
    if (!complete) return;
    begin = end + 1;
  }
}

}  // namespace

std::optional<ParseError> parse_folded(std::string_view text, FoldedFile& out) {
  std::optional<ParseError> error;
  for_each_line(text, [&](std::string_view line, size_t number, bool) {
    LineResult r = read_line(line, number);
    if (!r.error.empty()) {
      error = ParseError{number, std::move(r.error)};
      return false;
    }
    if (r.kind == LineKind::Directive) {
      if (out.period_given && r.period_ns != out.sample_period_ns) {
        error = ParseError{number, "a second \"# sample_period_ns=\" directive gives " + std::to_string(r.period_ns) +
                                       " ns, the first gave " + std::to_string(out.sample_period_ns) +
                                       " ns; keep one"};
        return false;
      }
      out.sample_period_ns = r.period_ns;
      out.period_given = true;
    } else if (r.kind == LineKind::Stack) {
      out.lines.push_back(std::move(r.stack));
    }
    return true;
  });
  return error;
}

int32_t detect_folded(std::string_view head) {
  const bool has_newline = head.find('\n') != std::string_view::npos;
  size_t stacks = 0;
  bool nested = false;
  bool bad = false;
  for_each_line(head, [&](std::string_view line, size_t number, bool complete) {
    if (!complete && has_newline) return false;  // possibly cut by the 64 KiB window
    LineResult r = read_line(line, number);
    if (!r.error.empty()) {
      bad = true;
      return false;
    }
    if (r.kind == LineKind::Stack) {
      ++stacks;
      nested = nested || r.stack.frames.size() > 1;
    }
    return true;
  });
  if (bad || stacks == 0) return 0;
  return nested ? 90 : 50;
}

}  // namespace folded
