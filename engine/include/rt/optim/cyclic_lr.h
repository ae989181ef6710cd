// rt/optim/cyclic_lr.h — schedulers that cycle the lr per batch and the momentum against it:
// OneCycleLR (torch.optim.lr_scheduler.OneCycleLR) and CyclicLR (torch's CyclicLR).
//
//   rt::optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
//   rt::optim::OneCycleLR sched(opt, /*max_lr=*/0.1, /*total_steps=*/1000, {.three_phase = true});
//   for (auto& batch : loader) { train_step(opt, batch); sched.step(); }
//
// Contracts (PyTorch's formulas; e = last_epoch counts batches)
// - Momentum (cycle_momentum, the default): the optimizer's momentum (Optimizer::momentum: beta1 of
//   Adam's family, SGD's and RMSprop's momentum) moves opposite to the lr; an optimizer with
//   neither throws ValueError at construction; pass cycle_momentum = false.
// - OneCycleLR: every group's initial lr becomes max_lr / div_factor (its "initial_lr"), the lr
//   rises to max_lr until e = pct_start * total_steps - 1, then falls to initial / final_div_factor at
//   e = total_steps - 1 (three_phase: back to initial by 2 * pct_start * total_steps - 2 first),
//   annealed by cosine or linearly; momentum goes max_momentum -> base_momentum -> max_momentum.
//   Stepping past total_steps throws ValueError. total_steps > 0, 0 <= pct_start <= 1.
// - CyclicLR: the lr moves between base_lr and max_lr in cycles of step_size_up + step_size_down
//   steps, scaled per cycle by mode: Triangular (1), Triangular2 (1 / 2^(cycle - 1)), ExpRange
//   (gamma^e); momentum between max_momentum and base_momentum. Constructing sets every group's lr
//   to base_lr (and momentum to base_momentum) when last_epoch is -1.
#pragma once
#include "rt/export.h"
#include "rt/optim/lr_scheduler.h"

RT_API_BEGIN

namespace rt::optim {

struct OneCycleOptions {
  double pct_start = 0.3;
  bool linear_anneal = false;  // false: cosine ("cos"), true: "linear"
  bool cycle_momentum = true;
  double base_momentum = 0.85;
  double max_momentum = 0.95;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  bool three_phase = false;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, const OneCycleOptions& options = {},
             int64_t last_epoch = -1);
  void step_to(int64_t epoch) override;
  const int64_t total_steps;
  const OneCycleOptions options;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  enum class Level { Initial, Max, Min };
  struct Phase {
    double end_step;
    Level start_lr, end_lr;
    bool momentum_starts_high, momentum_ends_high;
  };
  struct Position {  // the phase holding an epoch and the fraction of it done
    const Phase* phase;
    double pct;
  };
  Position position(int64_t epoch) const;
  double anneal(double start, double end, double pct) const;
  double max_lr_;
  std::vector<Phase> phases_;
};

struct CyclicOptions {
  enum class Mode { Triangular, Triangular2, ExpRange };
  int64_t step_size_up = 2000;
  int64_t step_size_down = -1;  // -1: step_size_up
  Mode mode = Mode::Triangular;
  double gamma = 1.0;
  bool cycle_momentum = true;
  double base_momentum = 0.8;
  double max_momentum = 0.9;
};

class CyclicLR : public LRScheduler {
 public:
  CyclicLR(Optimizer& optimizer, double base_lr, double max_lr, const CyclicOptions& options = {},
           int64_t last_epoch = -1);
  void step_to(int64_t epoch) override;
  const double base_lr, max_lr;
  const CyclicOptions options;

 protected:
  double lr_at(double base_lr, int64_t epoch) const override;

 private:
  // Where `epoch` is in its cycle: how far up (0 at base_lr, 1 at max_lr), and the mode's scale.
  std::pair<double, double> rise_and_scale(int64_t epoch) const;
};

}  // namespace rt::optim

RT_API_END
