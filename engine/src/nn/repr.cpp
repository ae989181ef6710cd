#include "repr.h"

#include <fmt/format.h>

namespace rt::nn::detail {

std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eninf") == std::string::npos) s += ".0";
  return s;
}

std::string py_tuple(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

std::string py_int_or_tuple(const Shape& s) { return s.size() == 1 ? std::to_string(s[0]) : py_tuple(s); }

Shape pair_of(const Shape& s, const char* module, const char* what) {
  if (s.size() == 1) return {s[0], s[0]};
  if (s.size() == 2) return s;
  throw ValueError(std::string(module) + ": " + what + " must have one or two values, got " + format_shape(s));
}

}  // namespace rt::nn::detail
