// rt/optim/optimizer.h — what every optimizer shares: parameter groups, per-parameter state,
// zero_grad() and state_dict().
//
//   rt::optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});
//   for (auto& batch : loader) {
//     opt.zero_grad();                                   // grads become undefined (set_to_none)
//     rt::cross_entropy((*model)(batch.input), batch.target).backward();
//     opt.step();                                        // runs under NoGradGuard
//   }
//   opt.set_lr(0.01);                                    // every group; or an LR scheduler
//   rt::optim::OptimizerStateDict sd = opt.state_dict();
//   rt::nn::StateDict flat = sd.flatten();               // "state.0.momentum_buffer", "param_groups.0.lr"
//   opt.load_state_dict(rt::optim::OptimizerStateDict::unflatten(flat));
//
// Contracts
// - Groups. Each group has its own parameters and a full copy of the optimizer's options
//   (SGD's SGDOptions, Adam's AdamOptions...): construct from a parameter list and options, or
//   from {params, options} groups (see OptimizerWithOptions::ParamGroup). Parameters must be
//   leaf tensors, appear once across all groups, and the list must not be empty (ValueError).
// - step() updates every parameter with a defined .grad, under NoGradGuard. State tensors are
//   allocated lazily on a parameter's first step under MemoryCategory::OptimizerState.
// - State dict (PyTorch's layout and names). Parameters are numbered 0, 1, ... across groups
//   in order. `state[i]` holds parameter i's named state ("momentum_buffer"; "step" (float32
//   0-dim), "exp_avg", "exp_avg_sq", "max_exp_avg_sq"); `param_groups[g]` holds group g's
//   options as tensors: float64 0-dim numbers ("lr", "momentum", "weight_decay", "eps", ...),
//   bool 0-dim flags ("nesterov", "amsgrad"), float64 [2] "betas", int64 [n] "params" (the
//   indices), and "initial_lr" once a scheduler has set it. state_dict() aliases the live
//   state (clone for a snapshot); load_state_dict() copies it (casting to each parameter's
//   dtype, "step" excepted) after checking group count and sizes (ValueError) and state
//   shapes (ShapeError).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rt/export.h"
#include "rt/nn/state_dict.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::optim {

using nn::StateDict;

struct OptimizerStateDict {
  std::map<int64_t, StateDict> state;
  std::vector<StateDict> param_groups;

  // "state.<i>.<name>" and "param_groups.<g>.<name>": one flat name -> tensor map (safetensors).
  StateDict flatten() const;
  // The inverse of flatten(); throws ValueError on a key of any other form.
  static OptimizerStateDict unflatten(const StateDict& flat);
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual void step() = 0;
  // set_to_none: .grad becomes undefined (PyTorch's default); otherwise it is zeroed in place.
  void zero_grad(bool set_to_none = true);

  size_t num_param_groups() const { return groups_.size(); }
  const TensorList& params(size_t group) const;
  TensorList parameters() const;  // every group's, in order

  virtual double lr(size_t group = 0) const = 0;
  virtual void set_lr(size_t group, double lr) = 0;
  void set_lr(double lr);  // every group
  // The lr an LR scheduler started from (PyTorch's group["initial_lr"]); nullopt until one is attached.
  std::optional<double> initial_lr(size_t group) const;
  void set_initial_lr(size_t group, double lr);

  // The momentum OneCycleLR and CyclicLR cycle: beta1 of "betas" (Adam and its family), else
  // "momentum" (SGD, RMSprop); nullopt for optimizers with neither, where set_momentum throws ValueError.
  virtual std::optional<double> momentum(size_t group) const;
  virtual void set_momentum(size_t group, double momentum);

  // Parameter `p`'s state (empty before its first step); nullptr if p is not optimized here.
  const StateDict* state(const Tensor& p) const;

  OptimizerStateDict state_dict() const;
  void load_state_dict(const OptimizerStateDict& sd);

 protected:
  explicit Optimizer(std::string name) : name_(std::move(name)) {}
  // Registers a group's parameters (validated); returns the group index.
  size_t add_group_params(TensorList params);
  StateDict& mutable_state(const Tensor& p);
  // Group options <-> tensors for the state dict (without "params" and "initial_lr").
  virtual StateDict options_to_state(size_t group) const = 0;
  virtual void options_from_state(size_t group, const StateDict& d) = 0;
  void check_group(size_t group) const;
  const std::string& optimizer_name() const { return name_; }

 private:
  struct Group {
    TensorList params;
    std::optional<double> initial_lr;
  };
  std::string name_;
  std::vector<Group> groups_;
  std::unordered_map<const TensorImpl*, StateDict> state_;
};

// Holds one Options per group; the base of SGD, Adam, AdamW.
template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  struct ParamGroup {
    TensorList params;
    Options options;
  };

  const Options& options(size_t group) const { check_group(group); return options_[group]; }
  Options& options(size_t group) { check_group(group); return options_[group]; }
  void add_param_group(const ParamGroup& g) {
    g.options.validate();
    add_group_params(g.params);
    options_.push_back(g.options);
  }

  double lr(size_t group = 0) const override { return options(group).lr; }
  void set_lr(size_t group, double lr) override { options(group).lr = lr; }
  using Optimizer::set_lr;

  std::optional<double> momentum(size_t group) const override {
    if constexpr (requires(const Options& o) { o.betas.first; }) return options(group).betas.first;
    else if constexpr (requires(const Options& o) { o.momentum; }) return options(group).momentum;
    else return Optimizer::momentum(group);
  }
  void set_momentum(size_t group, double momentum) override {
    if constexpr (requires(Options& o) { o.betas.first; }) options(group).betas.first = momentum;
    else if constexpr (requires(Options& o) { o.momentum; }) options(group).momentum = momentum;
    else Optimizer::set_momentum(group, momentum);
  }

 protected:
  OptimizerWithOptions(std::string name, std::vector<ParamGroup> groups) : Optimizer(std::move(name)) {
    if (groups.empty()) throw ValueError(optimizer_name() + ": optimizer got an empty parameter list");
    for (const auto& g : groups) add_param_group(g);
  }
  StateDict options_to_state(size_t group) const override { return options_[group].to_state(); }
  void options_from_state(size_t group, const StateDict& d) override {
    Options o = options_[group];
    o.load_state(d);
    o.validate();
    options_[group] = o;
  }

 private:
  std::vector<Options> options_;
};

}  // namespace rt::optim

RT_API_END
