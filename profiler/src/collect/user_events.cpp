// RecordFunction, counter(), record_gradient_histogram() and set_thread_name: the profiler's entry points
// for user code.
#include <fmt/format.h>

#include "collect/gradient_log.h"
#include "collect/recorder.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/prof/counters.h"
#include "rt/prof/gradient_histograms.h"
#include "rt/prof/record_function.h"
#include "rt/prof/session.h"

namespace rt::prof {

RecordFunction::RecordFunction(std::string_view name) : open_(collect::range_begin(name)) {}
RecordFunction::~RecordFunction() {
  if (open_) collect::range_end();
}

bool counter(std::string_view name, double value) { return collect::record_counter(name, value); }

bool record_gradient_histogram(std::string_view name, const rt::Tensor& grad, int bins) {
  if (bins < 1 || bins > kMaxGradientBins)
    throw rt::ValueError(fmt::format("record_gradient_histogram: bins is {}; it must be 1 to {} (default 32)", bins,
                                     kMaxGradientBins));
  if (name.empty())
    throw rt::ValueError("record_gradient_histogram: the name is empty; pass the parameter's qualified name "
                         "(\"encoder.0.weight\")");
  if (!collect::recording() || !grad.defined()) return false;
  const rt::debug::GradientStats stats = rt::debug::gradient_stats(grad, bins);
  collect::record_gradient(name, stats, rt::now_ns());
  return true;
}

void set_thread_name(std::string_view name) { collect::name_this_thread(name); }

bool profiling_active() { return collect::recording(); }

}  // namespace rt::prof
