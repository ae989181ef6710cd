// rt/debug/grad_norm_history.h — every parameter's gradient norm, step after step, with
// vanishing and exploding layers flagged.
//
//   rt::debug::GradNormHistory history;                  // thresholds: see Options
//   for (...) {
//     loss.backward();
//     const auto& step = history.record(model->named_parameters());
//     for (const auto& p : step.params)
//       if (p.exploding) std::printf("step %lld: %s grad norm %g\n", (long long)step.step, p.name.c_str(), p.norm);
//     opt.step(); opt.zero_grad();
//   }
//   history.series("fc1.weight");                        // that parameter's norm at every step
//
// Contracts
// - record() reads each parameter's .grad() (L2 norm in float64, see gradient_stats.h) in the
//   order given; a parameter without a gradient has has_grad == false, norm NaN, no flags.
// - vanishing: norm < Options::vanishing_below. exploding: norm > Options::exploding_above, or
//   norm > exploding_ratio x the median of the parameter's previous finite norms (the last
//   median_window of them; needs at least min_history), or a non-finite norm.
// - Steps are numbered 0, 1, ... in record() order. Names need not be the same every step: a
//   series has NaN where its parameter was absent. Plain data; not thread-safe (one owner).
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::debug {

struct ParameterGradNorm {
  std::string name;
  bool has_grad = false;
  double norm = std::numeric_limits<double>::quiet_NaN();
  double running_median = std::numeric_limits<double>::quiet_NaN();  // of earlier steps; NaN if too few
  bool vanishing = false;
  bool exploding = false;
};

struct GradNormStep {
  int64_t step = 0;
  std::vector<ParameterGradNorm> params;
  std::vector<std::string> vanishing() const;  // names, in parameter order
  std::vector<std::string> exploding() const;
};

class GradNormHistory {
 public:
  struct Options {
    double vanishing_below = 1e-7;
    double exploding_above = 1e3;
    double exploding_ratio = 10;
    size_t median_window = 100;
    size_t min_history = 3;
  };

  GradNormHistory() : GradNormHistory(Options{}) {}
  explicit GradNormHistory(Options options);  // ValueError on a non-positive ratio or window

  const GradNormStep& record(const std::vector<std::pair<std::string, Tensor>>& named_params);
  const std::vector<GradNormStep>& steps() const { return steps_; }
  std::vector<double> series(const std::string& name) const;  // one value per step
  const Options& options() const { return options_; }
  void clear();

 private:
  Options options_;
  std::vector<GradNormStep> steps_;
  std::unordered_map<std::string, std::vector<double>> finite_norms_;  // per name, recorded order
};

}  // namespace rt::debug

RT_API_END
