#include "histogram_index.h"

#include <algorithm>
#include <cmath>

namespace grad_histogram {

void HistogramIndex::clear() {
  title_.clear();
  seen_ = 0;
  parameters_.clear();
}

void HistogramIndex::update(const rt::plugin::SessionView& session) {
  size_t count = session.gradient_histogram_count();
  if (session.title() != title_ || count < seen_) {
    clear();
    title_ = std::string(session.title());
  }
  for (size_t i = seen_; i < count; ++i) {
    rt::plugin::GradientHistogram h = session.gradient_histogram(i);
    auto it = std::find_if(parameters_.begin(), parameters_.end(),
                           [&](const ParameterSeries& p) { return p.name == h.name; });
    if (it == parameters_.end()) {
      parameters_.push_back(ParameterSeries{std::string(h.name), {}, 0, 0, false, false});
      it = parameters_.end() - 1;
    }
    StepHistogram s;
    s.step = h.step;
    s.norm = h.norm;
    s.lo = h.lo;
    s.hi = h.hi;
    s.nan_count = h.nan_count;
    s.inf_count = h.inf_count;
    s.counts.assign(h.counts, h.counts + h.bins);
    if (s.nan_count + s.inf_count > 0) it->any_non_finite = true;
    bool finite_range = std::isfinite(s.lo) && std::isfinite(s.hi) && s.hi >= s.lo && !s.counts.empty();
    if (finite_range) {
      it->lo = it->has_range ? std::min(it->lo, s.lo) : s.lo;
      it->hi = it->has_range ? std::max(it->hi, s.hi) : s.hi;
      it->has_range = true;
    }
    if (!it->steps.empty() && it->steps.back().step == s.step && s.step >= 0)
      it->steps.back() = std::move(s);
    else
      it->steps.push_back(std::move(s));
  }
  seen_ = count;
}

}  // namespace grad_histogram
