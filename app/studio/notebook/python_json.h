// app/studio/notebook/python_json.h — JSON text exactly as Python's json.dumps writes it.
//
//   nlohmann::json doc = {{"b", 1.0}, {"a", {1e-05, 1e16, "é"}}};
//   rt::studio::dump_python_json(doc, 1)   // "{\n \"a\": [\n  1e-05,\n  1e+16,\n  \"é\"\n ],\n \"b\": 1.0\n}"
//   rt::studio::python_float_repr(0.1)     // "0.1"
//
// Contracts:
// - dump_python_json(v, indent) == json.dumps(v, indent=indent, sort_keys=True, separators=(",", ": "),
//   ensure_ascii=False) for every value nlohmann::json can hold: keys sorted by code point (byte order of
//   UTF-8), empty containers as "[]"/"{}", strings escaped like Python ('"', '\\', \n \r \t \b \f, other
//   control characters as \u00XX, everything else raw UTF-8), floats as python_float_repr, booleans and null
//   as true/false/null. indent < 0 gives Python's compact form with separators (", ", ": ").
// - Invalid UTF-8 in a string throws std::invalid_argument naming the JSON path of the string.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace rt::studio {

std::string dump_python_json(const nlohmann::json& value, int indent = 1);

// Python's repr(float): shortest digits that round-trip, fixed notation for 1e-4 <= |x| < 1e16 (with ".0"
// when integral), otherwise d.ddde±XX; "NaN", "Infinity", "-Infinity" as json.dumps writes them.
std::string python_float_repr(double value);

}  // namespace rt::studio
