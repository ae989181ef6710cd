#include "notebook/python_json.h"

#include "notebook/utf8_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace rt::studio {
namespace {

class PythonJsonWriter {
 public:
  explicit PythonJsonWriter(int indent) : indent_(indent) {}

  void write(const nlohmann::json& value, int level) {
    switch (value.type()) {
      case nlohmann::json::value_t::null: out_ += "null"; break;
      case nlohmann::json::value_t::boolean: out_ += value.get<bool>() ? "true" : "false"; break;
      case nlohmann::json::value_t::number_integer: out_ += std::to_string(value.get<std::int64_t>()); break;
      case nlohmann::json::value_t::number_unsigned: out_ += std::to_string(value.get<std::uint64_t>()); break;
      case nlohmann::json::value_t::number_float: out_ += python_float_repr(value.get<double>()); break;
      case nlohmann::json::value_t::string: write_string(value.get_ref<const std::string&>()); break;
      case nlohmann::json::value_t::array: write_array(value, level); break;
      case nlohmann::json::value_t::object: write_object(value, level); break;
      case nlohmann::json::value_t::binary:
        throw std::invalid_argument(fmt::format("cannot write binary JSON value at {}", path_text()));
      case nlohmann::json::value_t::discarded:
        throw std::invalid_argument(fmt::format("cannot write discarded JSON value at {}", path_text()));
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<std::size_t>(indent_) * static_cast<std::size_t>(level), ' ');
  }
  const char* item_separator() const { return indent_ < 0 ? ", " : ","; }

  void write_array(const nlohmann::json& value, int level) {
    if (value.empty()) { out_ += "[]"; return; }
    out_ += '[';
    std::size_t index = 0;
    for (const auto& item : value) {
      if (index > 0) out_ += item_separator();
      newline(level + 1);
      path_.push_back(fmt::format("[{}]", index++));
      write(item, level + 1);
      path_.pop_back();
    }
    newline(level);
    out_ += ']';
  }

  void write_object(const nlohmann::json& value, int level) {
    if (value.empty()) { out_ += "{}"; return; }
    out_ += '{';
    bool first = true;
    // nlohmann::json keeps object keys in std::map order: byte order, which is code point order for UTF-8, the
    // order Python's sort_keys gives.
    for (const auto& [key, item] : value.items()) {
      if (!first) out_ += item_separator();
      first = false;
      newline(level + 1);
      path_.push_back("." + key);
      write_string(key);
      out_ += ": ";
      write(item, level + 1);
      path_.pop_back();
    }
    newline(level);
    out_ += '}';
  }

  void write_string(std::string_view s) {
    out_ += '"';
    for (std::size_t i = 0; i < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        const std::size_t n = utf8_sequence_length(s, i);
        if (n == 0)
          throw std::invalid_argument(fmt::format(
              "invalid UTF-8 byte 0x{:02x} at offset {} of the string at {}; text written to a notebook must be "
              "UTF-8",
              c, i, path_text()));
        out_.append(s.substr(i, n));
        i += n;
        continue;
      }
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        case '\b': out_ += "\\b"; break;
        case '\f': out_ += "\\f"; break;
        default:
          if (c < 0x20) out_ += fmt::format("\\u{:04x}", c);
          else out_ += static_cast<char>(c);
      }
      ++i;
    }
    out_ += '"';
  }

  std::string path_text() const {
    std::string text = "$";
    for (const auto& part : path_) text += part;
    return text;
  }

  int indent_;
  std::string out_;
  std::vector<std::string> path_;
};

}  // namespace

std::string dump_python_json(const nlohmann::json& value, int indent) {
  PythonJsonWriter writer(indent);
  writer.write(value, 0);
  return writer.take();
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  // Shortest round-trip digits in scientific form, e.g. "-1.2345e+02", then laid out as Python's repr does:
  // exponent notation when the decimal point position is <= -4 or > 16.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view sci(buffer, static_cast<std::size_t>(result.ptr - buffer));
  std::string sign;
  if (!sci.empty() && sci.front() == '-') {
    sign = "-";
    sci.remove_prefix(1);
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos))
    if (c != '.') digits += c;
  int exponent = 0;
  const std::string_view exp_text = sci.substr(e_pos + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0), exp_text.data() + exp_text.size(),
                  exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int decpt = exponent + 1;
  const int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    std::string text = sign + digits.substr(0, 1);
    if (n > 1) text += "." + digits.substr(1);
    text += exponent < 0 ? "e-" : "e+";
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) text += '0';
    text += std::to_string(magnitude);
    return text;
  }
  if (decpt <= 0) return sign + "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
  if (decpt >= n) return sign + digits + std::string(static_cast<std::size_t>(decpt - n), '0') + ".0";
  return sign + digits.substr(0, static_cast<std::size_t>(decpt)) + "." +
         digits.substr(static_cast<std::size_t>(decpt));
}

}  // namespace rt::studio
