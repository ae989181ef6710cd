// rt/optim/lr_scheduler.h — learning-rate schedules (torch.optim.lr_scheduler).
//
//   rt::optim::SGD opt(params, {.lr = 0.1});
//   auto warmup = std::make_shared<rt::optim::LinearLR>(opt, 0.1, 1.0, 5);   // lr 0.01 now
//   auto cosine = std::make_shared<rt::optim::CosineAnnealingLR>(opt, 95);
//   rt::optim::SequentialLR sched(opt, {warmup, cosine}, {5});
//   for (int epoch = 0; epoch < 100; ++epoch) {
//     train_one_epoch(opt);
//     sched.step();                                 // after the optimizer's steps, like PyTorch
//     std::printf("lr %g\n", sched.get_last_lr()[0]);
//   }
//
// Contracts
// - Constructing a scheduler records each group's base lr (the optimizer's initial_lr, which
//   the first scheduler sets from the current lr; resuming with last_epoch >= 0 requires it,
//   ValueError otherwise) and performs the initial step: last_epoch becomes last_epoch + 1 and
//   the groups' lr is set for that epoch.
// - step() advances last_epoch by one and sets every group's lr from the closed form below;
//   step_to(epoch) jumps to any epoch. Schedules (b = base lr, e = last_epoch):
//     StepLR:             b * gamma^floor(e / step_size)
//     CosineAnnealingLR:  eta_min + (b - eta_min) * (1 + cos(pi * e / T_max)) / 2
//     LinearLR:           b * (start + (end - start) * min(e, total_iters) / total_iters)
//     ConstantLR:         b * factor before total_iters, b from then on
//     PolynomialLR:       b * (1 - min(e, total_iters) / total_iters)^power
//     CosineAnnealingWarmRestarts: eta_min + (b - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, with
//                         T_cur the epochs since the last restart and T_i = T_0 * T_mult^restarts
//   The closed forms equal PyTorch's chained (recursive) updates up to rounding, as long as
//   one scheduler drives the optimizer at a time (use SequentialLR to chain).
// - ChainedScheduler multiplies its schedulers' factors (lr / base lr) at each epoch: PyTorch's
//   ChainedScheduler for the multiplicative schedules (StepLR, ConstantLR, LinearLR,
//   PolynomialLR); chaining CosineAnnealingLR is where PyTorch's recursive form differs.
// - OneCycleLR and CyclicLR (and their momentum cycling) are in rt/optim/cyclic_lr.h.
// - SequentialLR runs schedulers[i] from milestones[i - 1] on, each restarted at epoch 0 when
//   its milestone is reached (PyTorch's behaviour). All schedulers must drive `optimizer`.
// - state_dict(): "last_epoch" (int64 0-dim), "base_lrs" and "last_lr" (float64 [groups]).
// - A scheduler keeps a reference to its optimizer, which must outlive it.
#pragma once
#include <memory>
#include <vector>

#include "rt/export.h"
#include "rt/optim/optimizer.h"

RT_API_BEGIN

namespace rt::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step() { step_to(last_epoch_ + 1); }
  virtual void step_to(int64_t epoch);
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return optimizer_; }

  StateDict state_dict() const;
  // Restores last_epoch and base_lrs and sets the optimizer's lrs for that epoch.
  void load_state_dict(const StateDict& sd);

 protected:
  LRScheduler(Optimizer& optimizer, int64_t last_epoch);
  // Call at the end of a derived constructor (virtual dispatch is off in the base's).
  void initial_step() { step_to(last_epoch_ + 1); }
  // The lr of a group whose base lr is `base_lr` at `epoch`.
  virtual double lr_at(double base_lr, int64_t epoch) const = 0;
  void apply(const std::vector<double>& lrs, int64_t epoch);

 private:
  friend class SequentialLR;
  friend class ChainedScheduler;
  Optimizer& optimizer_;
  int64_t last_epoch_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

// lr = base * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
  const int64_t step_size;
  const double gamma;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;
};

// Half a cosine from base lr down to eta_min over T_max epochs (and back up after, periodically).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0, int64_t last_epoch = -1);
  const int64_t T_max;
  const double eta_min;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;
};

// Linear ramp of the factor from start_factor to end_factor over total_iters epochs (warm-up).
// start_factor in (0, 1], end_factor in [0, 1], total_iters > 0 (ValueError).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3.0, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);
  const double start_factor, end_factor;
  const int64_t total_iters;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;
};

// lr = base * factor until total_iters, then base. factor in [0, 1] (ValueError).
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(Optimizer& optimizer, double factor = 1.0 / 3.0, int64_t total_iters = 5, int64_t last_epoch = -1);
  const double factor;
  const int64_t total_iters;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;
};

// lr = base * (1 - min(epoch, total_iters) / total_iters)^power. total_iters > 0 (ValueError).
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(Optimizer& optimizer, int64_t total_iters = 5, double power = 1.0, int64_t last_epoch = -1);
  const int64_t total_iters;
  const double power;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;
};

// SGDR: a cosine from base lr down to eta_min over T_i epochs, then a restart with
// T_i = T_i * T_mult (T_0 > 0, T_mult >= 1, ValueError otherwise). step_to_fraction(2.5) sets
// the lr at a fractional epoch, as PyTorch's step(epoch + i / iters_per_epoch) does.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(Optimizer& optimizer, int64_t T_0, int64_t T_mult = 1, double eta_min = 0.0,
                              int64_t last_epoch = -1);
  void step_to_fraction(double epoch);
  const int64_t T_0, T_mult;
  const double eta_min;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  double lr_at_fraction(double base_lr, double epoch) const;
};

// Steps every scheduler together: lr = base * product of each scheduler's lr_at / base. All must
// drive `optimizer` (ValueError). Each child keeps its own last_epoch in step.
class ChainedScheduler : public LRScheduler {
 public:
  ChainedScheduler(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers);
  void step_to(int64_t epoch) override;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
};

// schedulers[0] until milestones[0], then schedulers[1] restarted at 0, and so on.
// milestones must be increasing and one fewer than the schedulers (ValueError).
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);
  void step_to(int64_t epoch) override;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace rt::optim

RT_API_END
