#include "ansi_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <vector>

namespace rt::studio {

namespace {

constexpr char kEsc = '\x1b';

// Calls on_text(segment) for plain text and on_sgr(params) for each "ESC [ params m"; drops other escapes.
template <class OnText, class OnSgr>
void scan_ansi(std::string_view s, OnText on_text, OnSgr on_sgr) {
  std::size_t i = 0, text_start = 0;
  auto flush = [&](std::size_t end) {
    if (end > text_start) on_text(s.substr(text_start, end - text_start));
  };
  while (i < s.size()) {
    if (s[i] != kEsc) {
      ++i;
      continue;
    }
    flush(i);
    std::size_t j = i + 1;
    if (j < s.size() && s[j] == '[') {  // CSI: parameters, intermediates, one final byte in 0x40-0x7e
      ++j;
      std::size_t params_start = j;
      while (j < s.size() && static_cast<unsigned char>(s[j]) >= 0x20 && static_cast<unsigned char>(s[j]) < 0x40) ++j;
      if (j < s.size()) {
        if (s[j] == 'm') on_sgr(s.substr(params_start, j - params_start));
        ++j;
      }
    } else if (j < s.size() && s[j] == ']') {  // OSC: up to BEL or ESC backslash
      ++j;
      while (j < s.size() && s[j] != '\a' && !(s[j] == kEsc && j + 1 < s.size() && s[j + 1] == '\\')) ++j;
      if (j < s.size()) j += (s[j] == '\a') ? 1 : 2;
    } else if (j < s.size()) {
      ++j;  // two-byte escape such as ESC ( B or ESC =
    }
    i = j;
    text_start = i;
  }
  flush(s.size());
}

std::vector<int> parse_params(std::string_view params) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i <= params.size()) {
    std::size_t end = params.find_first_of(";:", i);
    if (end == std::string_view::npos) end = params.size();
    int value = 0;
    std::from_chars(params.data() + i, params.data() + end, value);
    out.push_back(value);  // an empty parameter means 0
    i = end + 1;
  }
  return out;
}

// The xterm default palette, tuned a little darker so it reads on a white background.
constexpr std::array<const char*, 16> kPalette = {
    "#000000", "#c91b00", "#00a600", "#a68a00", "#0225c7", "#b400b4", "#00a6b2", "#7f7f7f",
    "#686868", "#ff6e67", "#22c22a", "#c7b000", "#4060ff", "#e040e0", "#00c5c7", "#3f3f3f"};

std::string color256(int n) {
  if (n < 16) return kPalette[static_cast<std::size_t>(std::max(0, n))];
  if (n < 232) {
    n -= 16;
    auto level = [](int v) { return v == 0 ? 0 : 55 + 40 * v; };
    return fmt::format("#{:02x}{:02x}{:02x}", level(n / 36), level((n / 6) % 6), level(n % 6));
  }
  int grey = 8 + 10 * (std::min(n, 255) - 232);
  return fmt::format("#{:02x}{:02x}{:02x}", grey, grey, grey);
}

struct Style {
  std::optional<std::string> fg, bg;
  bool bold = false, italic = false, underline = false;
  bool plain() const { return !fg && !bg && !bold && !italic && !underline; }
};

// Reads an extended colour (38/48 ; 5 ; N or ; 2 ; R ; G ; B) starting after the 38/48 at params[i].
std::optional<std::string> extended_color(const std::vector<int>& p, std::size_t& i) {
  if (i + 1 < p.size() && p[i + 1] == 5 && i + 2 < p.size()) {
    i += 2;
    return color256(p[i]);
  }
  if (i + 1 < p.size() && p[i + 1] == 2 && i + 4 < p.size()) {
    auto c = [](int v) { return std::clamp(v, 0, 255); };
    std::string color = fmt::format("#{:02x}{:02x}{:02x}", c(p[i + 2]), c(p[i + 3]), c(p[i + 4]));
    i += 4;
    return color;
  }
  return std::nullopt;
}

void apply_sgr(Style& st, const std::vector<int>& p) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    const int c = p[i];
    if (c == 0) st = Style{};
    else if (c == 1) st.bold = true;
    else if (c == 22) st.bold = false;
    else if (c == 3) st.italic = true;
    else if (c == 23) st.italic = false;
    else if (c == 4) st.underline = true;
    else if (c == 24) st.underline = false;
    else if (c >= 30 && c <= 37) st.fg = kPalette[static_cast<std::size_t>(c - 30)];
    else if (c >= 90 && c <= 97) st.fg = kPalette[static_cast<std::size_t>(c - 90 + 8)];
    else if (c == 39) st.fg.reset();
    else if (c >= 40 && c <= 47) st.bg = kPalette[static_cast<std::size_t>(c - 40)];
    else if (c >= 100 && c <= 107) st.bg = kPalette[static_cast<std::size_t>(c - 100 + 8)];
    else if (c == 49) st.bg.reset();
    else if (c == 38) st.fg = extended_color(p, i);
    else if (c == 48) st.bg = extended_color(p, i);
  }
}

void append_escaped(std::string& out, std::string_view text) {
  for (char ch : text) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
}

std::string open_tag(const Style& st) {
  std::string css;
  if (st.fg) css += "color:" + *st.fg + ";";
  if (st.bg) css += "background-color:" + *st.bg + ";";
  if (st.bold) css += "font-weight:bold;";
  if (st.italic) css += "font-style:italic;";
  if (st.underline) css += "text-decoration:underline;";
  if (!css.empty()) css.pop_back();
  return "<span style=\"" + css + "\">";
}

}  // namespace

std::string ansi_to_html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  Style style;
  scan_ansi(
      text,
      [&](std::string_view t) {
        if (style.plain()) {
          append_escaped(out, t);
        } else {
          out += open_tag(style);
          append_escaped(out, t);
          out += "</span>";
        }
      },
      [&](std::string_view params) { apply_sgr(style, parse_params(params)); });
  return out;
}

}  // namespace rt::studio
