// rt/nn/container.h — modules that hold modules (torch.nn.Sequential, ModuleList).
//
//   auto mlp = std::make_shared<rt::nn::Sequential>(std::make_shared<rt::nn::Linear>(64, 128),
//                                                   std::make_shared<rt::nn::ReLU>(),
//                                                   std::make_shared<rt::nn::Linear>(128, 10));
//   rt::Tensor logits = (*mlp)(x);            // children run in order, each in its scope "0", "1", "2"
//   mlp->push_back(std::make_shared<rt::nn::Dropout>(0.1));   // registered as "3"
//   auto fc0 = mlp->at<rt::nn::Linear>(0);    // typed access (ValueError on the wrong type)
//
//   auto layers = std::make_shared<rt::nn::ModuleList>();
//   for (int i = 0; i < 6; ++i) layers->push_back(std::make_shared<rt::nn::TransformerEncoderLayer>(512, 8));
//   for (auto& layer : *layers) x = (*layer)(x);   // scope "layers.3" once registered as "layers"
//
// Sequential names its children "0", "1", ... (or the names given to the named constructor)
// and its forward feeds each child's output to the next through operator(); a Linear followed by
// ReLU, GELU, SiLU, Sigmoid or Tanh runs as one rt::linear_pointwise while
// rt::backends::cpu::fuse_linear_activation() is on (the same values, autograd graph and module
// scopes; the bias is added in the activation's pass, rt/ops/linear_pointwise.h). ModuleList only
// holds modules; it has no forward (NotImplementedError), and its children's scope names are
// "<list name>.<index>" so module paths match named_modules() even though the list itself
// is never called. to_string() folds runs of identical children like PyTorch:
// "(0-5): 6 x TransformerEncoderLayer(...)" for ModuleList.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules);
  template <class... Ms>
  explicit Sequential(std::shared_ptr<Ms>... modules) : Module("Sequential") { (push_back(std::move(modules)), ...); }
  explicit Sequential(const std::vector<std::shared_ptr<Module>>& modules);
  explicit Sequential(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_modules);

  void push_back(std::shared_ptr<Module> module);  // named by its index
  void push_back(const std::string& name, std::shared_ptr<Module> module);
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const;  // IndexError when out of range
  template <class M> std::shared_ptr<M> at(size_t i) const { return checked_cast<M>((*this)[i], i); }

  Tensor forward(const Tensor& x) override;

 private:
  template <class M> static std::shared_ptr<M> checked_cast(const std::shared_ptr<Module>& m, size_t i) {
    auto p = std::dynamic_pointer_cast<M>(m);
    if (!p) throw ValueError("Sequential::at(" + std::to_string(i) + "): the module there is a " + m->name());
    return p;
  }
};

class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
  template <class... Ms>
  explicit ModuleList(std::shared_ptr<Ms>... modules) : Module("ModuleList") { (push_back(std::move(modules)), ...); }
  explicit ModuleList(const std::vector<std::shared_ptr<Module>>& modules);

  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return items_.size(); }
  const std::shared_ptr<Module>& operator[](size_t i) const;  // IndexError when out of range
  template <class M> std::shared_ptr<M> at(size_t i) const {
    auto p = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!p) throw ValueError("ModuleList::at(" + std::to_string(i) + "): the module there is a " + (*this)[i]->name());
    return p;
  }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return items_.begin(); }
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return items_.end(); }

  std::string to_string() const override;

 protected:
  void set_scope_name(const std::string& name) override;

 private:
  std::vector<std::shared_ptr<Module>> items_;
};

}  // namespace rt::nn

RT_API_END
