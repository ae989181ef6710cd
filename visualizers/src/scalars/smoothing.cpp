#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/scalars.h"

namespace rt::viz {

std::vector<double> smooth(std::span<const double> values, double weight) {
  if (!(weight >= 0.0 && weight <= 1.0))
    throw ValueError(fmt::format("smooth: the weight must be in [0, 1], got {}", weight));
  std::vector<double> out(values.begin(), values.end());
  const bool constant = std::all_of(values.begin(), values.end(), [&](double v) { return v == values.front(); });
  if (constant || weight == 0.0) return out;

  double last = 0.0;
  double count = 0.0;
  for (double& v : out) {
    if (!std::isfinite(v)) continue;
    count += 1.0;
    if (weight == 1.0) {
      last += (v - last) / count;
      v = last;
    } else {
      last = last * weight + (1.0 - weight) * v;
      v = last / (1.0 - std::pow(weight, count));
    }
  }
  return out;
}

}  // namespace rt::viz
