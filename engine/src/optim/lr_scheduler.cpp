#include "rt/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "rt/ops/creation.h"

namespace rt::optim {

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch) : optimizer_(optimizer), last_epoch_(last_epoch) {
  if (last_epoch < -1) throw ValueError("LRScheduler: last_epoch must be >= -1, got " + std::to_string(last_epoch));
  for (size_t g = 0; g < optimizer.num_param_groups(); ++g) {
    if (!optimizer.initial_lr(g)) {
      if (last_epoch != -1)
        throw ValueError("LRScheduler: param 'initial_lr' is not specified in param_groups[" + std::to_string(g) +
                         "] when resuming an optimizer (last_epoch=" + std::to_string(last_epoch) +
                         "). Hint: load the optimizer's state_dict first, or pass last_epoch=-1.");
      optimizer.set_initial_lr(g, optimizer.lr(g));
    }
    base_lrs_.push_back(*optimizer.initial_lr(g));
  }
}

void LRScheduler::apply(const std::vector<double>& lrs, int64_t epoch) {
  last_epoch_ = epoch;
  for (size_t g = 0; g < lrs.size(); ++g) optimizer_.set_lr(g, lrs[g]);
  last_lr_ = lrs;
}

void LRScheduler::step_to(int64_t epoch) {
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(lr_at(b, epoch));
  apply(lrs, epoch);
}

StateDict LRScheduler::state_dict() const {
  return {{"last_epoch", rt::scalar_tensor(last_epoch_, kInt64)},
          {"base_lrs", rt::from_vector(base_lrs_)},
          {"last_lr", rt::from_vector(last_lr_)}};
}

void LRScheduler::load_state_dict(const StateDict& sd) {
  const auto base = sd.at("base_lrs").to_vector<double>();
  if (base.size() != base_lrs_.size())
    throw ValueError("LRScheduler: loaded base_lrs has " + std::to_string(base.size()) + " values, the optimizer has " +
                     std::to_string(base_lrs_.size()) + " parameter groups");
  base_lrs_ = base;
  step_to(sd.at("last_epoch").item<int64_t>());
}

StepLR::StepLR(Optimizer& optimizer, int64_t step, double g, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size(step), gamma(g) {
  if (step <= 0) throw ValueError("StepLR: step_size must be positive, got " + std::to_string(step));
  initial_step();
}

double StepLR::lr_at(double base_lr, int64_t epoch) const {
  return base_lr * std::pow(gamma, double(epoch / step_size));
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t t_max, double min_lr, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_max(t_max), eta_min(min_lr) {
  if (t_max <= 0) throw ValueError("CosineAnnealingLR: T_max must be positive, got " + std::to_string(t_max));
  initial_step();
}

double CosineAnnealingLR::lr_at(double base_lr, int64_t epoch) const {
  return eta_min + (base_lr - eta_min) * (1.0 + std::cos(std::numbers::pi * double(epoch) / double(T_max))) / 2.0;
}

LinearLR::LinearLR(Optimizer& optimizer, double start, double end, int64_t total, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), start_factor(start), end_factor(end), total_iters(total) {
  if (!(start > 0.0 && start <= 1.0))
    throw ValueError("LinearLR: starting multiplicative factor expected to be greater than 0 and less or equal to 1, got " +
                     std::to_string(start));
  if (!(end >= 0.0 && end <= 1.0))
    throw ValueError("LinearLR: ending multiplicative factor expected to be between 0 and 1, got " + std::to_string(end));
  if (total <= 0) throw ValueError("LinearLR: total_iters must be positive, got " + std::to_string(total));
  initial_step();
}

double LinearLR::lr_at(double base_lr, int64_t epoch) const {
  const double progress = double(std::min(epoch, total_iters)) / double(total_iters);
  return base_lr * (start_factor + (end_factor - start_factor) * progress);
}

ConstantLR::ConstantLR(Optimizer& optimizer, double f, int64_t total, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), factor(f), total_iters(total) {
  if (!(f >= 0.0 && f <= 1.0))
    throw ValueError("ConstantLR: constant multiplicative factor expected to be between 0 and 1, got " +
                     std::to_string(f));
  initial_step();
}

double ConstantLR::lr_at(double base_lr, int64_t epoch) const {
  return epoch >= total_iters ? base_lr : base_lr * factor;
}

PolynomialLR::PolynomialLR(Optimizer& optimizer, int64_t total, double p, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), total_iters(total), power(p) {
  if (total <= 0) throw ValueError("PolynomialLR: total_iters must be positive, got " + std::to_string(total));
  initial_step();
}

double PolynomialLR::lr_at(double base_lr, int64_t epoch) const {
  return base_lr * std::pow(1.0 - double(std::min(total_iters, epoch)) / double(total_iters), power);
}

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t t0, int64_t mult,
                                                         double min_lr, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_0(t0), T_mult(mult), eta_min(min_lr) {
  if (t0 <= 0) throw ValueError("CosineAnnealingWarmRestarts: expected positive integer T_0, but got " + std::to_string(t0));
  if (mult < 1)
    throw ValueError("CosineAnnealingWarmRestarts: expected integer T_mult >= 1, but got " + std::to_string(mult));
  initial_step();
}

double CosineAnnealingWarmRestarts::lr_at_fraction(double base_lr, double epoch) const {
  if (!(epoch >= 0.0))
    throw ValueError("CosineAnnealingWarmRestarts: expected non-negative epoch, but got " + std::to_string(epoch));
  double t_cur = epoch, t_i = double(T_0);
  if (T_mult == 1) {
    t_cur = std::fmod(epoch, t_i);
  } else {
    while (t_cur >= t_i) {  // whole cycles, counted exactly (no logarithm to round)
      t_cur -= t_i;
      t_i *= double(T_mult);
    }
  }
  return eta_min + (base_lr - eta_min) * (1.0 + std::cos(std::numbers::pi * t_cur / t_i)) / 2.0;
}

double CosineAnnealingWarmRestarts::lr_at(double base_lr, int64_t epoch) const {
  return lr_at_fraction(base_lr, double(epoch));
}

void CosineAnnealingWarmRestarts::step_to_fraction(double epoch) {
  std::vector<double> lrs;
  for (double b : base_lrs()) lrs.push_back(lr_at_fraction(b, epoch));
  apply(lrs, int64_t(std::floor(epoch)));
}

ChainedScheduler::ChainedScheduler(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : LRScheduler(optimizer, -1), schedulers_(std::move(schedulers)) {
  if (schedulers_.empty()) throw ValueError("ChainedScheduler: expects at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i]) throw ValueError("ChainedScheduler: scheduler " + std::to_string(i) + " is null");
    if (&schedulers_[i]->optimizer() != &optimizer)
      throw ValueError("ChainedScheduler: expects all schedulers to belong to the same optimizer, but scheduler " +
                       std::to_string(i) + " drives a different one");
  }
  initial_step();
}

void ChainedScheduler::step_to(int64_t epoch) {
  for (auto& s : schedulers_) s->last_epoch_ = epoch;  // children follow, so their state_dicts stay true
  LRScheduler::step_to(epoch);
}

double ChainedScheduler::lr_at(double base_lr, int64_t epoch) const {
  if (base_lr == 0.0) return 0.0;
  double lr = base_lr;
  for (const auto& s : schedulers_) lr *= s->lr_at(base_lr, epoch) / base_lr;
  return lr;
}

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  if (schedulers_.empty()) throw ValueError("SequentialLR: expects at least one scheduler");
  if (milestones_.size() != schedulers_.size() - 1)
    throw ValueError("SequentialLR: sequential schedulers expect the number of schedulers (" +
                     std::to_string(schedulers_.size()) + ") to be one more than the number of milestones (" +
                     std::to_string(milestones_.size()) + ")");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i]) throw ValueError("SequentialLR: scheduler " + std::to_string(i) + " is null");
    if (&schedulers_[i]->optimizer() != &optimizer)
      throw ValueError("SequentialLR: scheduler " + std::to_string(i) + " drives a different optimizer");
  }
  for (size_t i = 1; i < milestones_.size(); ++i)
    if (milestones_[i] <= milestones_[i - 1]) throw ValueError("SequentialLR: milestones must be increasing");
  initial_step();
}

void SequentialLR::step_to(int64_t epoch) {
  const size_t idx = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
  LRScheduler& s = *schedulers_[idx];
  s.step_to(epoch - (idx > 0 ? milestones_[idx - 1] : 0));
  apply(s.get_last_lr(), epoch);
}

double SequentialLR::lr_at(double base_lr, int64_t epoch) const {
  const size_t idx = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) - milestones_.begin());
  return schedulers_[idx]->lr_at(base_lr, epoch - (idx > 0 ? milestones_[idx - 1] : 0));
}

}  // namespace rt::optim
