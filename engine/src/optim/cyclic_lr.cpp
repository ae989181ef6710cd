#include "rt/optim/cyclic_lr.h"

#include <cmath>
#include <numbers>

namespace rt::optim {

namespace {

void require_momentum(const Optimizer& optimizer, const char* scheduler) {
  if (!optimizer.momentum(0))
    throw ValueError(std::string(scheduler) + ": optimizer must support momentum (momentum or betas) with "
                     "cycle_momentum enabled; pass cycle_momentum = false");
}

// OneCycleLR's groups start from max_lr / div_factor: set before the base records base lrs.
Optimizer& start_one_cycle(Optimizer& optimizer, double max_lr, const OneCycleOptions& o, int64_t last_epoch) {
  if (last_epoch == -1)
    for (size_t g = 0; g < optimizer.num_param_groups(); ++g) optimizer.set_initial_lr(g, max_lr / o.div_factor);
  if (o.cycle_momentum) {
    require_momentum(optimizer, "OneCycleLR");
    if (last_epoch == -1)
      for (size_t g = 0; g < optimizer.num_param_groups(); ++g) optimizer.set_momentum(g, o.max_momentum);
  }
  return optimizer;
}

// CyclicLR's groups start at base_lr (and base_momentum) when it starts the schedule.
Optimizer& start_cycles(Optimizer& optimizer, double base_lr, const CyclicOptions& o, int64_t last_epoch) {
  if (o.cycle_momentum) require_momentum(optimizer, "CyclicLR");
  if (last_epoch == -1)
    for (size_t g = 0; g < optimizer.num_param_groups(); ++g) {
      optimizer.set_lr(g, base_lr);
      if (o.cycle_momentum) optimizer.set_momentum(g, o.base_momentum);
    }
  return optimizer;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total, const OneCycleOptions& o,
                       int64_t last_epoch)
    : LRScheduler(start_one_cycle(optimizer, max_lr, o, last_epoch), last_epoch),
      total_steps(total),
      options(o),
      max_lr_(max_lr) {
  if (total <= 0) throw ValueError("OneCycleLR: expected positive integer total_steps, but got " + std::to_string(total));
  if (!(o.pct_start >= 0.0 && o.pct_start <= 1.0))
    throw ValueError("OneCycleLR: expected float between 0 and 1 pct_start, but got " + std::to_string(o.pct_start));
  const double up_end = o.pct_start * double(total) - 1.0, last = double(total - 1);
  if (o.three_phase)
    phases_ = {{up_end, Level::Initial, Level::Max, true, false},
               {2.0 * o.pct_start * double(total) - 2.0, Level::Max, Level::Initial, false, true},
               {last, Level::Initial, Level::Min, true, true}};
  else
    phases_ = {{up_end, Level::Initial, Level::Max, true, false}, {last, Level::Max, Level::Min, false, true}};
  initial_step();
}

OneCycleLR::Position OneCycleLR::position(int64_t epoch) const {
  if (epoch > total_steps)
    throw ValueError("OneCycleLR: tried to step " + std::to_string(epoch + 1) +
                     " times. The specified number of total steps is " + std::to_string(total_steps));
  double start = 0.0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (double(epoch) <= p.end_step || i + 1 == phases_.size())
      return {&p, (double(epoch) - start) / (p.end_step - start)};
    start = p.end_step;
  }
  return {&phases_.back(), 1.0};
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options.linear_anneal) return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
}

double OneCycleLR::lr_at(double base_lr, int64_t epoch) const {
  const auto level = [&](Level l) {
    return l == Level::Initial ? base_lr : l == Level::Max ? max_lr_ : base_lr / options.final_div_factor;
  };
  const Position at = position(epoch);
  return anneal(level(at.phase->start_lr), level(at.phase->end_lr), at.pct);
}

void OneCycleLR::step_to(int64_t epoch) {
  LRScheduler::step_to(epoch);
  if (!options.cycle_momentum) return;
  const Position at = position(epoch);
  const auto level = [&](bool high) { return high ? options.max_momentum : options.base_momentum; };
  const double m = anneal(level(at.phase->momentum_starts_high), level(at.phase->momentum_ends_high), at.pct);
  for (size_t g = 0; g < optimizer().num_param_groups(); ++g) optimizer().set_momentum(g, m);
}

CyclicLR::CyclicLR(Optimizer& optimizer, double base, double max, const CyclicOptions& o, int64_t last_epoch)
    : LRScheduler(start_cycles(optimizer, base, o, last_epoch), last_epoch), base_lr(base), max_lr(max), options(o) {
  if (o.step_size_up <= 0)
    throw ValueError("CyclicLR: step_size_up must be positive, got " + std::to_string(o.step_size_up));
  if (o.step_size_down < -1 || o.step_size_down == 0)
    throw ValueError("CyclicLR: step_size_down must be positive (or -1 for step_size_up), got " +
                     std::to_string(o.step_size_down));
  initial_step();
}

std::pair<double, double> CyclicLR::rise_and_scale(int64_t epoch) const {
  const double up = double(options.step_size_up);
  const double total = up + double(options.step_size_down == -1 ? options.step_size_up : options.step_size_down);
  const double ratio = up / total;
  const double cycle = std::floor(1.0 + double(epoch) / total);
  const double x = 1.0 + double(epoch) / total - cycle;
  const double rise = x <= ratio ? x / ratio : (x - 1.0) / (ratio - 1.0);
  switch (options.mode) {
    case CyclicOptions::Mode::Triangular: return {rise, 1.0};
    case CyclicOptions::Mode::Triangular2: return {rise, 1.0 / std::pow(2.0, cycle - 1.0)};
    case CyclicOptions::Mode::ExpRange: return {rise, std::pow(options.gamma, double(epoch))};
  }
  return {rise, 1.0};
}

double CyclicLR::lr_at(double, int64_t epoch) const {
  const auto [rise, scale] = rise_and_scale(epoch);
  return base_lr + (max_lr - base_lr) * rise * scale;
}

void CyclicLR::step_to(int64_t epoch) {
  LRScheduler::step_to(epoch);
  if (!options.cycle_momentum) return;
  const auto [rise, scale] = rise_and_scale(epoch);
  const double m = options.max_momentum - (options.max_momentum - options.base_momentum) * rise * scale;
  for (size_t g = 0; g < optimizer().num_param_groups(); ++g) optimizer().set_momentum(g, m);
}

}  // namespace rt::optim
