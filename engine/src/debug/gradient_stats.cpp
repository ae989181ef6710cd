#include "rt/debug/gradient_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace rt::debug {
namespace {

// Calls f(double) for every element of a CPU tensor in row-major order, reading through strides.
template <typename F>
void for_each_value(const Tensor& t, F&& f) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    const T* base = static_cast<const T*>(t.raw_data());
    const Shape& sizes = t.sizes();
    const Shape& strides = t.strides();
    const int64_t n = t.numel();
    if (n == 0) return;
    const size_t nd = sizes.size();
    std::vector<int64_t> idx(nd, 0);
    int64_t offset = 0;
    for (int64_t k = 0; k < n; ++k) {
      f(double(compute_t<T>(base[offset])));
      for (size_t d = nd; d-- > 0;) {
        if (++idx[d] < sizes[d]) {
          offset += strides[d];
          break;
        }
        offset -= strides[d] * (sizes[d] - 1);
        idx[d] = 0;
      }
    }
  });
}

}  // namespace

double Histogram::bin_lo(size_t i) const {
  if (counts.empty()) return lo;
  return lo + (hi - lo) * double(i) / double(counts.size());
}

double Histogram::bin_hi(size_t i) const {
  if (counts.empty()) return hi;
  return i + 1 == counts.size() ? hi : lo + (hi - lo) * double(i + 1) / double(counts.size());
}

std::string GradientStats::summary() const {
  if (!defined) return "None";
  std::string s = fmt::format("{} {} norm={:.6g} min={:.6g} max={:.6g} mean={:.6g}", format_shape(shape),
                              dtype_name(dtype), norm, min, max, mean);
  if (nan_count) s += fmt::format(" nan={}", nan_count);
  if (inf_count) s += fmt::format(" inf={}", inf_count);
  return s;
}

GradientStats gradient_stats(const Tensor& tensor, int bins) {
  if (bins < 0) throw ValueError("gradient_stats: bins must be >= 0, got " + std::to_string(bins));
  GradientStats s;
  if (!tensor.defined()) return s;
  s.defined = true;
  s.shape = tensor.sizes();
  s.dtype = tensor.dtype();
  s.device = tensor.device();
  s.numel = tensor.numel();
  const Tensor t = tensor.device().is_cpu() ? tensor : tensor.to(Device::cpu());

  double lo = INFINITY, hi = -INFINITY, sum = 0, scale = 0;
  for_each_value(t, [&](double v) {
    if (std::isnan(v)) {
      ++s.nan_count;
    } else if (std::isinf(v)) {
      ++s.inf_count;
    } else {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      scale = std::max(scale, std::abs(v));
    }
  });
  const int64_t finite = s.finite_count();
  if (finite > 0) {
    s.min = lo;
    s.max = hi;
    s.mean = sum / double(finite);
  }
  if (s.nan_count) s.norm = NAN;
  else if (s.inf_count) s.norm = INFINITY;

  const bool want_norm = s.nan_count == 0 && s.inf_count == 0 && scale > 0;
  const bool want_hist = bins > 0 && finite > 0;
  if (want_hist) {
    s.histogram.lo = lo;
    s.histogram.hi = hi;
    s.histogram.counts.assign(size_t(bins), 0);
  }
  if (!want_norm && !want_hist) return s;
  // Halves keep hi - lo finite for values near the float64 limits.
  const double half_lo = lo / 2, half_range = hi / 2 - lo / 2;
  double sum_sq = 0;
  for_each_value(t, [&](double v) {
    if (!std::isfinite(v)) return;
    if (want_norm) {
      const double r = v / scale;
      sum_sq += r * r;
    }
    if (want_hist) {
      int64_t b = 0;
      if (half_range > 0) b = std::min<int64_t>(bins - 1, int64_t((v / 2 - half_lo) / half_range * bins));
      ++s.histogram.counts[size_t(std::max<int64_t>(b, 0))];
    }
  });
  if (want_norm) s.norm = scale * std::sqrt(sum_sq);
  return s;
}

}  // namespace rt::debug
