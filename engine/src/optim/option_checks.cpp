#include "option_checks.h"

#include <fmt/format.h>

#include "rt/error.h"

namespace rt::optim::detail {

void check_non_negative(const char* optimizer, const char* what, double v) {
  if (!(v >= 0.0)) throw ValueError(fmt::format("{}: invalid {}: {}", optimizer, what, v));
}

void check_beta(const char* optimizer, int index, double beta) {
  if (!(beta >= 0.0 && beta < 1.0))
    throw ValueError(fmt::format("{}: invalid beta parameter at index {}: {} (expected 0 <= beta < 1)", optimizer,
                                 index, beta));
}

void check_unit_interval(const char* optimizer, const char* what, double v) {
  if (!(v >= 0.0 && v <= 1.0))
    throw ValueError(fmt::format("{}: invalid {}: {} (expected 0 <= {} <= 1)", optimizer, what, v, what));
}

}  // namespace rt::optim::detail
