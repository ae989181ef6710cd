// histogram_index.h — the gradient histograms of a session, grouped by parameter, for the panel to draw.
//
//   HistogramIndex index;
//   index.update(*frame.session);        // cheap when nothing new arrived: only new records are read
//   for (const ParameterSeries& p : index.parameters())
//     draw(p.name, p.steps.size(), p.lo, p.hi, p.last_norm);
//
// Contracts
// - update() reads records [seen, count) of the session; a session with fewer records than seen, or another
//   title, is a new session and rebuilds the index.
// - Parameters keep the order of their first record. Each keeps its records in the session's order, one per
//   step (a second record of the same step replaces the first: the latest backward of that step wins).
// - lo/hi are the union of the finite ranges of the parameter's records; any_non_finite says a NaN or inf
//   appeared in some step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rt/plugin/panel_sdk.h"

namespace grad_histogram {

struct StepHistogram {
  int64_t step = -1;
  double norm = 0;
  double lo = 0, hi = 0;
  int64_t nan_count = 0, inf_count = 0;
  std::vector<int64_t> counts;
};

struct ParameterSeries {
  std::string name;
  std::vector<StepHistogram> steps;
  double lo = 0, hi = 0;
  bool has_range = false;
  bool any_non_finite = false;
};

class HistogramIndex {
 public:
  void update(const rt::plugin::SessionView& session);
  void clear();
  const std::vector<ParameterSeries>& parameters() const { return parameters_; }
  size_t records_seen() const { return seen_; }

 private:
  std::string title_;
  size_t seen_ = 0;
  std::vector<ParameterSeries> parameters_;
};

}  // namespace grad_histogram
