#include "rt/nn/module.h"

#include <algorithm>
#include <unordered_set>

#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"

namespace rt::nn {

namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// PyTorch's _addindent: every line after the first gets `spaces` more indentation.
std::string add_indent(const std::string& s, int spaces) {
  std::string out;
  const std::string pad(size_t(spaces), ' ');
  for (char c : s) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
  return s;
}

}  // namespace

Tensor empty_parameter(const Shape& shape, ScalarType dtype) {
  MemoryCategoryGuard g(MemoryCategory::Parameter);
  return rt::empty(shape, dtype);
}

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Tensor Module::forward(const Tensor&) {
  throw NotImplementedError("Module [" + type_name_ + "] does not implement forward(const Tensor&)" + module_context() +
                            ". Hint: override forward() or call the module's own overload.");
}

Tensor Module::operator()(const Tensor& x) {
  ModuleScope s(scope_name_);
  return forward(x);
}

void Module::check_name(const std::string& name, const char* kind) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(std::string(kind) + " name '" + name + "' of module " + type_name_ +
                     " must be non-empty and cannot contain '.'");
  const std::string k(kind);
  auto in = [&](const std::vector<Entry>& list) {
    return std::any_of(list.begin(), list.end(), [&](const Entry& e) { return e.name == name; });
  };
  const bool child = std::any_of(children_.begin(), children_.end(), [&](const auto& c) { return c.first == name; });
  if ((k != "parameter" && in(parameters_)) || (k != "buffer" && in(buffers_)) || (k != "module" && child))
    throw ValueError("cannot register " + k + " '" + name + "' on module " + type_name_ +
                     ": a parameter, buffer or child module of that name already exists");
}

Tensor Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_name(name, "parameter");
  if (!t.defined()) throw ValueError("register_parameter: parameter '" + name + "' of " + type_name_ + " is undefined");
  if (!t.is_leaf())
    throw ValueError("register_parameter: parameter '" + name + "' of " + type_name_ +
                     " is not a leaf tensor. Hint: register t.detach() instead.");
  t.requires_grad_(requires_grad);
  for (auto& e : parameters_)
    if (e.name == name) return e.tensor = t;
  parameters_.push_back({name, t, true});
  return t;
}

Tensor Module::register_buffer(const std::string& name, Tensor t, bool persistent) {
  check_name(name, "buffer");
  if (!t.defined()) throw ValueError("register_buffer: buffer '" + name + "' of " + type_name_ + " is undefined");
  for (auto& e : buffers_)
    if (e.name == name) {
      e.persistent = persistent;
      return e.tensor = t;
    }
  buffers_.push_back({name, t, persistent});
  return t;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(name, "module");
  if (!module) throw ValueError("register_module: module '" + name + "' of " + type_name_ + " is null");
  if (module.get() == this) throw ValueError("register_module: module " + type_name_ + " cannot be its own child");
  module->set_scope_name(name);
  for (auto& c : children_)
    if (c.first == name) {
      c.second = std::move(module);
      return;
    }
  children_.emplace_back(name, std::move(module));
}

void Module::collect(const std::string& prefix, bool recurse, bool buffers,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  for (const auto& e : buffers ? buffers_ : parameters_) out.emplace_back(join(prefix, e.name), e.tensor);
  if (!recurse) return;
  for (const auto& [n, c] : children_) c->collect(join(prefix, n), true, buffers, out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, false, out);
  // A tensor shared by two modules is listed once, under its first name (PyTorch's remove_duplicate).
  std::unordered_set<const TensorImpl*> seen;
  std::erase_if(out, [&](const auto& p) { return !seen.insert(p.second.impl_ptr().get()).second; });
  return out;
}

TensorList Module::parameters(bool recurse) const {
  TensorList out;
  for (auto& [n, t] : named_parameters(recurse)) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, true, out);
  std::unordered_set<const TensorImpl*> seen;
  std::erase_if(out, [&](const auto& p) { return !seen.insert(p.second.impl_ptr().get()).second; });
  return out;
}

TensorList Module::buffers(bool recurse) const {
  TensorList out;
  for (auto& [n, t] : named_buffers(recurse)) out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [n, c] : children_) out.push_back(c);
  return out;
}

void Module::collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out) {
  for (const auto& [p, m] : out)
    if (m == this) return;
  out.emplace_back(prefix, this);
  for (const auto& [n, c] : children_) c->collect_modules(join(prefix, n), out);
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  collect_modules("", out);
  return out;
}

std::vector<Module*> Module::modules() {
  std::vector<Module*> out;
  for (auto& [n, m] : named_modules()) out.push_back(m);
  return out;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [n, c] : children_) c->train(on);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard ng;
  for (auto& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else g.zero_();
  }
}

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  for (const auto& e : parameters_) out.insert(join(prefix, e.name), e.tensor);
  for (const auto& e : buffers_)
    if (e.persistent) out.insert(join(prefix, e.name), e.tensor);
  for (const auto& [n, c] : children_) c->collect_state(join(prefix, n), out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& state, bool strict) {
  const StateDict own = state_dict();
  LoadStateDictResult r;
  std::vector<std::string> mismatches;
  for (const auto& [k, t] : own) {
    const Tensor* src = state.find(k);
    if (!src) {
      r.missing_keys.push_back(k);
    } else if (!src->defined() || src->sizes() != t.sizes()) {
      mismatches.push_back("size mismatch for " + k + ": copying a param with shape " +
                           (src->defined() ? format_shape(src->sizes()) : std::string("<undefined>")) +
                           " from checkpoint, the shape in current model is " + format_shape(t.sizes()) + ".");
    }
  }
  for (const auto& [k, t] : state)
    if (!own.contains(k)) r.unexpected_keys.push_back(k);

  std::string errors;
  if (strict && !r.missing_keys.empty()) errors += "\n  Missing key(s) in state_dict: " + quoted_list(r.missing_keys) + ".";
  if (strict && !r.unexpected_keys.empty())
    errors += "\n  Unexpected key(s) in state_dict: " + quoted_list(r.unexpected_keys) + ".";
  for (const auto& m : mismatches) errors += "\n  " + m;
  if (!errors.empty()) throw ValueError("Error(s) in loading state_dict for " + type_name_ + ":" + errors);

  NoGradGuard ng;
  for (const auto& [k, t] : own)
    if (const Tensor* src = state.find(k)) {
      Tensor dst = t;
      dst.copy_(*src);
    }
  return r;
}

std::string Module::to_string() const {
  std::vector<std::string> lines;
  const std::string extra = extra_repr();
  if (!extra.empty()) {
    size_t start = 0, nl;
    while ((nl = extra.find('\n', start)) != std::string::npos) {
      lines.push_back(extra.substr(start, nl - start));
      start = nl + 1;
    }
    lines.push_back(extra.substr(start));
  }
  for (const auto& [n, c] : children_) lines.push_back("(" + n + "): " + add_indent(c->to_string(), 2));
  std::string s = type_name_ + "(";
  if (!lines.empty()) {
    if (lines.size() == 1 && children_.empty()) {
      s += lines[0];
    } else {
      s += "\n";
      for (const auto& l : lines) s += "  " + l + "\n";
    }
  }
  return s + ")";
}

}  // namespace rt::nn
