// gradient_histogram_problem: the consistency rule every reader of stored or received histograms applies.
#include <fmt/format.h>

#include <cmath>

#include "rt/prof/gradient_histograms.h"

namespace rt::prof {

std::string gradient_histogram_problem(const GradientHistogramRecord& r) {
  if (r.numel < 0) return fmt::format("numel is {} (negative)", r.numel);
  if (r.nan_count < 0 || r.inf_count < 0)
    return fmt::format("NaN count {} or Inf count {} is negative", r.nan_count, r.inf_count);
  if (r.nan_count > r.numel || r.inf_count > r.numel - r.nan_count)
    return fmt::format("{} NaN and {} Inf values in {} elements", r.nan_count, r.inf_count, r.numel);
  if (r.counts.size() > size_t(kMaxGradientBins))
    return fmt::format("{} bins (at most {})", r.counts.size(), kMaxGradientBins);
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || r.lo > r.hi)
    return fmt::format("the range [{}, {}] is not a finite interval", r.lo, r.hi);
  const int64_t finite = r.numel - r.nan_count - r.inf_count;
  int64_t sum = 0;
  for (int64_t c : r.counts) {
    if (c < 0) return fmt::format("a bin count is {} (negative)", c);
    if (c > finite - sum) return fmt::format("the bin counts exceed the {} finite elements", finite);
    sum += c;
  }
  if (sum != finite)
    return fmt::format("the bin counts sum to {}, not to the {} finite elements (numel {} - NaN {} - Inf {})", sum,
                       finite, r.numel, r.nan_count, r.inf_count);
  return {};
}

}  // namespace rt::prof
