#include "rt/optim/optimizer.h"

#include <unordered_set>

#include "options_state.h"
#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt::optim {

namespace {

int64_t parse_index(const std::string& s, const std::string& key) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    throw ValueError("optimizer state dict: key '" + key + "' should look like 'state.<index>.<name>' or "
                     "'param_groups.<index>.<name>'");
  return std::stoll(s);
}

}  // namespace

StateDict OptimizerStateDict::flatten() const {
  StateDict out;
  for (const auto& [i, st] : state)
    for (const auto& [name, t] : st) out.insert("state." + std::to_string(i) + "." + name, t);
  for (size_t g = 0; g < param_groups.size(); ++g)
    for (const auto& [name, t] : param_groups[g]) out.insert("param_groups." + std::to_string(g) + "." + name, t);
  return out;
}

OptimizerStateDict OptimizerStateDict::unflatten(const StateDict& flat) {
  OptimizerStateDict out;
  for (const auto& [key, t] : flat) {
    const size_t a = key.find('.');
    const size_t b = a == std::string::npos ? a : key.find('.', a + 1);
    if (b == std::string::npos || b + 1 >= key.size())
      throw ValueError("optimizer state dict: key '" + key + "' should look like 'state.<index>.<name>' or "
                       "'param_groups.<index>.<name>'");
    const std::string kind = key.substr(0, a), name = key.substr(b + 1);
    const int64_t index = parse_index(key.substr(a + 1, b - a - 1), key);
    if (kind == "state") {
      out.state[index].insert(name, t);
    } else if (kind == "param_groups") {
      if (size_t(index) >= out.param_groups.size()) out.param_groups.resize(size_t(index) + 1);
      out.param_groups[size_t(index)].insert(name, t);
    } else {
      throw ValueError("optimizer state dict: key '" + key + "' starts with neither 'state.' nor 'param_groups.'");
    }
  }
  return out;
}

void Optimizer::check_group(size_t group) const {
  if (group >= groups_.size())
    throw IndexError(name_ + ": parameter group " + std::to_string(group) + " is out of range (the optimizer has " +
                     std::to_string(groups_.size()) + ")");
}

size_t Optimizer::add_group_params(TensorList params) {
  if (params.empty()) throw ValueError(name_ + ": optimizer got an empty parameter list");
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params) seen.insert(p.impl_ptr().get());
  for (const auto& p : params) {
    if (!p.defined()) throw ValueError(name_ + ": a parameter is undefined");
    if (!p.is_leaf()) throw ValueError(name_ + ": can't optimize a non-leaf Tensor (shape " + format_shape(p.sizes()) + ")");
    if (!seen.insert(p.impl_ptr().get()).second)
      throw ValueError(name_ + ": some parameters appear more than once (in one or several parameter groups)");
  }
  groups_.push_back({std::move(params), std::nullopt});
  return groups_.size() - 1;
}

const TensorList& Optimizer::params(size_t group) const {
  check_group(group);
  return groups_[group].params;
}

TensorList Optimizer::parameters() const {
  TensorList out;
  for (const auto& g : groups_) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

void Optimizer::set_lr(double lr) {
  for (size_t g = 0; g < groups_.size(); ++g) set_lr(g, lr);
}

std::optional<double> Optimizer::initial_lr(size_t group) const {
  check_group(group);
  return groups_[group].initial_lr;
}

void Optimizer::set_initial_lr(size_t group, double lr) {
  check_group(group);
  groups_[group].initial_lr = lr;
}

std::optional<double> Optimizer::momentum(size_t group) const {
  check_group(group);
  return std::nullopt;
}

void Optimizer::set_momentum(size_t group, double) {
  check_group(group);
  throw ValueError(name_ + ": the optimizer has no momentum or betas to cycle; pass cycle_momentum = false");
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard ng;
  for (const auto& g : groups_)
    for (const auto& p : g.params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) p.set_grad(Tensor());
      else grad.zero_();
    }
}

const StateDict* Optimizer::state(const Tensor& p) const {
  auto it = state_.find(p.impl_ptr().get());
  if (it != state_.end()) return &it->second;
  for (const auto& g : groups_)
    for (const auto& q : g.params)
      if (q.is_same(p)) {
        static const StateDict empty;
        return &empty;
      }
  return nullptr;
}

StateDict& Optimizer::mutable_state(const Tensor& p) { return state_[p.impl_ptr().get()]; }

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict out;
  int64_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    StateDict group = options_to_state(g);
    if (groups_[g].initial_lr) group.insert("initial_lr", detail::number(*groups_[g].initial_lr));
    std::vector<int64_t> ids;
    for (const auto& p : groups_[g].params) {
      auto it = state_.find(p.impl_ptr().get());
      if (it != state_.end() && !it->second.empty()) out.state[index] = it->second;
      ids.push_back(index++);
    }
    group.insert("params", rt::from_vector(ids));
    out.param_groups.push_back(std::move(group));
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerStateDict& sd) {
  if (sd.param_groups.size() != groups_.size())
    throw ValueError(name_ + ": loaded state dict has " + std::to_string(sd.param_groups.size()) +
                     " parameter groups, the optimizer has " + std::to_string(groups_.size()));
  std::vector<std::pair<const Tensor*, int64_t>> order;  // parameter, saved index
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Tensor* ids = sd.param_groups[g].find("params");
    const int64_t n = int64_t(groups_[g].params.size());
    if (!ids || ids->numel() != n)
      throw ValueError(name_ + ": loaded state dict contains a parameter group " + std::to_string(g) + " of " +
                       (ids ? std::to_string(ids->numel()) : std::string("unknown")) +
                       " parameters that doesn't match the size of optimizer's group (" + std::to_string(n) + ")");
    const auto saved = ids->to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) order.emplace_back(&groups_[g].params[size_t(i)], saved[size_t(i)]);
  }
  // Validate everything before changing anything.
  for (const auto& [p, id] : order) {
    auto it = sd.state.find(id);
    if (it == sd.state.end()) continue;
    for (const auto& [name, t] : it->second)
      if (name != "step" && t.dim() > 0 && t.sizes() != p->sizes())
        throw ShapeError(name_ + ": loaded state '" + name + "' of parameter " + std::to_string(id) + " has shape " +
                         format_shape(t.sizes()) + " but the parameter has shape " + format_shape(p->sizes()));
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    options_from_state(g, sd.param_groups[g]);
    if (const Tensor* lr0 = sd.param_groups[g].find("initial_lr")) groups_[g].initial_lr = lr0->item<double>();
  }
  NoGradGuard ng;
  MemoryCategoryGuard mg(MemoryCategory::OptimizerState);
  state_.clear();
  for (const auto& [p, id] : order) {
    auto it = sd.state.find(id);
    if (it == sd.state.end()) continue;
    StateDict& st = state_[p->impl_ptr().get()];
    for (const auto& [name, t] : it->second)
      st.insert(name, name == "step" ? rt::clone(t) : rt::clone(t).to(p->dtype()));
  }
}

}  // namespace rt::optim
