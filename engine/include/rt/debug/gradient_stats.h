// rt/debug/gradient_stats.h — what one gradient looks like: shape, norm, range, NaN/Inf
// counts and a histogram. The backward debugger and the gradient visualizers share it.
//
//   rt::debug::GradientStats s = rt::debug::gradient_stats(w.grad());        // 32 bins
//   if (s.nan_count) std::printf("%lld NaN in %s\n", (long long)s.nan_count, rt::format_shape(s.shape).c_str());
//   for (size_t i = 0; i < s.histogram.counts.size(); ++i)
//     std::printf("[%g, %g): %lld\n", s.histogram.bin_lo(i), s.histogram.bin_hi(i), (long long)s.histogram.counts[i]);
//
// Contracts
// - Everything is computed in float64 from the tensor's own elements (any dtype, any strides;
//   non-CPU tensors are copied to the CPU first). Reading a CPU tensor runs no engine op, so it
//   is safe inside autograd observers and op observers.
// - norm is the L2 norm of all elements, as torch.linalg.vector_norm gives it: NaN when any
//   element is NaN, +inf when any is ±inf (and none is NaN). It is computed with scaling, so
//   float64 values near the overflow limit do not overflow the sum of squares.
// - min, max and mean are over the finite elements only; NaN when there are none.
// - The histogram has `bins` equal-width bins over [min, max] of the finite elements; bin i
//   holds lo + i*w <= v < lo + (i+1)*w, the last bin also holds max, and with min == max every
//   element is in bin 0. Its counts sum to finite_count(). bins == 0 skips it (counts empty).
// - An undefined tensor gives defined == false and zero counts.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::debug {

struct Histogram {
  double lo = 0, hi = 0;        // min and max of the finite elements
  std::vector<int64_t> counts;  // one per bin
  double bin_lo(size_t i) const;
  double bin_hi(size_t i) const;
};

struct GradientStats {
  bool defined = false;
  Shape shape;
  ScalarType dtype = kFloat32;
  Device device;
  int64_t numel = 0;
  double norm = 0;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double mean = std::numeric_limits<double>::quiet_NaN();
  int64_t nan_count = 0;
  int64_t inf_count = 0;
  Histogram histogram;

  int64_t finite_count() const { return numel - nan_count - inf_count; }
  bool has_non_finite() const { return nan_count + inf_count > 0; }
  // "[64, 10] float32 norm=1.23 min=-0.5 max=0.7 mean=0.01" (+ " nan=3 inf=1" when present).
  std::string summary() const;
};

// Throws rt::ValueError when bins < 0.
GradientStats gradient_stats(const Tensor& t, int bins = 32);

}  // namespace rt::debug

RT_API_END
