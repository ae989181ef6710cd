// rt/nn/state_dict.h — an insertion-ordered name -> tensor map (PyTorch's OrderedDict of tensors).
//
//   rt::nn::StateDict sd = model.state_dict();       // "0.weight", "0.bias", "1.running_mean", ...
//   for (const auto& [name, t] : sd) std::printf("%s %s\n", name.c_str(), rt::format_shape(t.sizes()).c_str());
//   sd.insert("extra", rt::zeros({3}));              // a new key goes last
//   sd.insert("0.bias", rt::ones({4}));              // an existing key keeps its position
//   const rt::Tensor& w = sd.at("0.weight");         // throws rt::IndexError naming the key if absent
//   if (const rt::Tensor* b = sd.find("0.bias")) ... // nullptr if absent
//
// Module::state_dict(), Optimizer::state_dict().flatten() and checkpoint files all use it.
// Values are tensor handles: a StateDict taken from a live module aliases its parameters
// (clone the values for a snapshot).
#pragma once
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::nn {

class StateDict {
 public:
  using Item = std::pair<std::string, Tensor>;
  using const_iterator = std::vector<Item>::const_iterator;

  StateDict() = default;
  StateDict(std::initializer_list<Item> items);

  // Adds `key` at the end, or replaces its value in place when it exists.
  void insert(const std::string& key, Tensor value);
  bool erase(const std::string& key);  // false when absent
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  const Tensor& at(const std::string& key) const;  // throws IndexError when absent
  Tensor* find(const std::string& key);
  const Tensor* find(const std::string& key) const;

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<std::string> keys() const;
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace rt::nn

RT_API_END
