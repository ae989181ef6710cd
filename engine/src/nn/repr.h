// Python-style text for module reprs: 1e-05, True, (3, 3), (512,).
#pragma once
#include <string>

#include "rt/tensor.h"

namespace rt::nn::detail {

std::string py_float(double v);
inline std::string py_bool(bool v) { return v ? "True" : "False"; }
std::string py_tuple(const Shape& s);
// One value prints as an int ("2"), several as a tuple ("(2, 2)").
std::string py_int_or_tuple(const Shape& s);
// Expands a one- or two-value Shape to two values; throws ValueError naming `module` and `what`.
Shape pair_of(const Shape& s, const char* module, const char* what);

}  // namespace rt::nn::detail
