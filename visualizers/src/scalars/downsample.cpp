#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rt/error.h"
#include "rt/viz/scalars.h"

namespace rt::viz {

namespace {

ScalarColumn one_sample(int64_t pixel, double v) {
  const double m = std::isfinite(v) ? v : std::nan("");
  return {pixel, m, m, v, v, 1};
}

}  // namespace

void downsample(std::span<const int64_t> x, std::span<const double> y, int64_t x0, int64_t x1, double width_px,
                std::vector<ScalarColumn>& out) {
  if (x.size() != y.size())
    throw ValueError(fmt::format("downsample: {} x values but {} y values", x.size(), y.size()));
  if (x1 < x0) throw ValueError(fmt::format("downsample: x1 ({}) is before x0 ({})", x1, x0));
  if (!std::isfinite(width_px) || width_px <= 0)
    throw ValueError(fmt::format("downsample: width must be > 0 pixels, got {}", width_px));
  if (!std::is_sorted(x.begin(), x.end())) throw ValueError("downsample: x is not sorted");

  out.clear();
  const auto pixels = int64_t(std::ceil(width_px));
  const size_t begin = size_t(std::lower_bound(x.begin(), x.end(), x0) - x.begin());
  const size_t end = size_t(std::upper_bound(x.begin(), x.end(), x1) - x.begin());
  if (begin > 0) out.push_back(one_sample(-1, y[begin - 1]));

  const double px_per_x = x1 > x0 ? width_px / double(x1 - x0) : 0.0;
  for (size_t i = begin; i < end; ++i) {
    const int64_t pixel = std::min(pixels - 1, int64_t(double(x[i] - x0) * px_per_x));
    const double v = y[i];
    if (out.empty() || out.back().pixel != pixel) {
      out.push_back(one_sample(pixel, v));
      continue;
    }
    ScalarColumn& c = out.back();
    if (std::isfinite(v)) {
      c.min = std::isnan(c.min) ? v : std::min(c.min, v);
      c.max = std::isnan(c.max) ? v : std::max(c.max, v);
    }
    c.last = v;
    ++c.count;
  }
  if (end < x.size()) out.push_back(one_sample(pixels, y[end]));
}

}  // namespace rt::viz
