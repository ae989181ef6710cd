#include "plugin_host/session_view_adapter.h"

namespace rt::studio {

plugin::GradientHistogram SessionDataView::gradient_histogram(size_t i) const {
  const prof::GradientHistogramRecord& r = data_->gradient_histograms.at(i);
  plugin::GradientHistogram h;
  h.step = r.step;
  h.time_ns = r.time_ns;
  h.name = data_->strings.at(r.name);
  h.numel = r.numel;
  h.norm = r.norm;
  h.lo = r.lo;
  h.hi = r.hi;
  h.nan_count = r.nan_count;
  h.inf_count = r.inf_count;
  h.counts = r.counts.data();
  h.bins = r.counts.size();
  return h;
}

}  // namespace rt::studio
