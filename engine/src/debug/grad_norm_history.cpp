#include "rt/debug/grad_norm_history.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "rt/debug/gradient_stats.h"

namespace rt::debug {
namespace {

double median_of_last(const std::vector<double>& v, size_t window) {
  const size_t n = std::min(window, v.size());
  std::vector<double> w(v.end() - std::ptrdiff_t(n), v.end());
  const size_t mid = n / 2;
  std::nth_element(w.begin(), w.begin() + std::ptrdiff_t(mid), w.end());
  if (n % 2) return w[mid];
  const double upper = w[mid];
  return (*std::max_element(w.begin(), w.begin() + std::ptrdiff_t(mid)) + upper) / 2;
}

}  // namespace

std::vector<std::string> GradNormStep::vanishing() const {
  std::vector<std::string> out;
  for (const auto& p : params)
    if (p.vanishing) out.push_back(p.name);
  return out;
}

std::vector<std::string> GradNormStep::exploding() const {
  std::vector<std::string> out;
  for (const auto& p : params)
    if (p.exploding) out.push_back(p.name);
  return out;
}

GradNormHistory::GradNormHistory(Options options) : options_(options) {
  if (!(options_.exploding_ratio > 0))
    throw ValueError(fmt::format("GradNormHistory: exploding_ratio must be > 0, got {}", options_.exploding_ratio));
  if (options_.median_window == 0) throw ValueError("GradNormHistory: median_window must be > 0");
}

const GradNormStep& GradNormHistory::record(const std::vector<std::pair<std::string, Tensor>>& named_params) {
  GradNormStep step;
  step.step = int64_t(steps_.size());
  step.params.reserve(named_params.size());
  for (const auto& [name, param] : named_params) {
    ParameterGradNorm p;
    p.name = name;
    const Tensor g = param.defined() ? param.grad() : Tensor();
    std::vector<double>& history = finite_norms_[name];
    if (history.size() >= options_.min_history) p.running_median = median_of_last(history, options_.median_window);
    if (g.defined()) {
      p.has_grad = true;
      p.norm = gradient_stats(g, 0).norm;
      p.vanishing = p.norm < options_.vanishing_below;
      p.exploding = !std::isfinite(p.norm) || p.norm > options_.exploding_above ||
                    (std::isfinite(p.running_median) && p.norm > options_.exploding_ratio * p.running_median);
      if (std::isfinite(p.norm)) history.push_back(p.norm);
    }
    step.params.push_back(std::move(p));
  }
  steps_.push_back(std::move(step));
  return steps_.back();
}

std::vector<double> GradNormHistory::series(const std::string& name) const {
  std::vector<double> out;
  out.reserve(steps_.size());
  for (const auto& step : steps_) {
    double v = std::numeric_limits<double>::quiet_NaN();
    for (const auto& p : step.params)
      if (p.name == name) {
        v = p.norm;
        break;
      }
    out.push_back(v);
  }
  return out;
}

void GradNormHistory::clear() {
  steps_.clear();
  finite_norms_.clear();
}

}  // namespace rt::debug
