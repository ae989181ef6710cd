#include "rt/nn/container.h"

#include <fmt/format.h>

#include <optional>
#include <typeinfo>

#include "rt/backends.h"
#include "rt/nn/activation.h"
#include "rt/nn/linear.h"
#include "rt/ops/linear_pointwise.h"

namespace rt::nn {

namespace {

std::string add_indent(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

[[noreturn]] void out_of_range(const char* what, size_t i, size_t n) {
  throw IndexError(std::string(what) + ": index " + std::to_string(i) + " is out of range for a container of " +
                   std::to_string(n) + " modules");
}

}  // namespace

Sequential::Sequential(std::initializer_list<std::shared_ptr<Module>> modules) : Module("Sequential") {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::shared_ptr<Module>>& modules) : Module("Sequential") {
  for (const auto& m : modules) push_back(m);
}

Sequential::Sequential(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named) : Module("Sequential") {
  for (const auto& [n, m] : named) push_back(n, m);
}

void Sequential::push_back(std::shared_ptr<Module> module) { push_back(std::to_string(size()), std::move(module)); }

void Sequential::push_back(const std::string& name, std::shared_ptr<Module> module) {
  for (const auto& c : named_children())
    if (c.first == name) throw ValueError("Sequential: a module named '" + name + "' already exists");
  register_module(name, std::move(module));
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  if (i >= size()) out_of_range("Sequential", i, size());
  return named_children()[i].second;
}

namespace {

// The activation a module computes when it is exactly one of the fusable kinds (a subclass may
// override forward, so only the classes themselves count).
std::optional<LinearActivation> fusable_activation(const Module& m) {
  const std::type_info& t = typeid(m);
  if (t == typeid(ReLU)) return LinearActivation::Relu;
  if (t == typeid(SiLU)) return LinearActivation::Silu;
  if (t == typeid(Sigmoid)) return LinearActivation::Sigmoid;
  if (t == typeid(Tanh)) return LinearActivation::Tanh;
  if (t == typeid(GELU)) return linear_activation_from_name("gelu", static_cast<const GELU&>(m).approximate);
  return std::nullopt;
}

}  // namespace

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  const auto& children = named_children();
  const bool fuse = backends::cpu::fuse_linear_activation();
  for (size_t i = 0; i < children.size(); ++i) {
    Module& m = *children[i].second;
    // A shape the layer rejects goes through Linear::forward, for its error message.
    if (fuse && i + 1 < children.size() && typeid(m) == typeid(Linear) && y.dim() > 0 &&
        y.size(-1) == static_cast<const Linear&>(m).in_features) {
      if (auto act = fusable_activation(*children[i + 1].second)) {  // rt/ops/linear_pointwise.h
        const auto& fc = static_cast<const Linear&>(m);
        y = linear_pointwise(y, fc.weight, fc.bias, *act, {fc.scope_name(), children[i + 1].second->scope_name()});
        ++i;
        continue;
      }
    }
    y = m(y);
  }
  return y;
}

ModuleList::ModuleList(std::initializer_list<std::shared_ptr<Module>> modules) : Module("ModuleList") {
  for (const auto& m : modules) push_back(m);
}

ModuleList::ModuleList(const std::vector<std::shared_ptr<Module>>& modules) : Module("ModuleList") {
  for (const auto& m : modules) push_back(m);
}

void ModuleList::push_back(std::shared_ptr<Module> module) {
  const std::string index = std::to_string(items_.size());
  register_module(index, module);
  if (!scope_name().empty()) module->set_scope_name(scope_name() + "." + index);
  items_.push_back(std::move(module));
}

const std::shared_ptr<Module>& ModuleList::operator[](size_t i) const {
  if (i >= items_.size()) out_of_range("ModuleList", i, items_.size());
  return items_[i];
}

void ModuleList::set_scope_name(const std::string& name) {
  Module::set_scope_name(name);
  for (size_t i = 0; i < items_.size(); ++i)
    items_[i]->set_scope_name(name.empty() ? std::to_string(i) : name + "." + std::to_string(i));
}

std::string ModuleList::to_string() const {
  if (items_.empty()) return name() + "()";
  std::string s = name() + "(\n";
  size_t start = 0;
  while (start < items_.size()) {
    const std::string r = items_[start]->to_string();
    size_t end = start;
    while (end + 1 < items_.size() && items_[end + 1]->to_string() == r) ++end;
    std::string local = fmt::format("({}): {}", start, r);
    if (end != start) local = fmt::format("({}-{}): {} x {}", start, end, end - start + 1, r);
    s += "  " + add_indent(local) + "\n";
    start = end + 1;
  }
  return s + ")";
}

}  // namespace rt::nn
