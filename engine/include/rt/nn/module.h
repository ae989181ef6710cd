// rt/nn/module.h — the base of every layer: named parameters, buffers and child modules.
//
//   struct Net : rt::nn::Module {
//     std::shared_ptr<rt::nn::Linear> fc1, fc2;
//     Net() : Module("Net") {
//       fc1 = register_module("fc1", std::make_shared<rt::nn::Linear>(784, 128));
//       fc2 = register_module("fc2", std::make_shared<rt::nn::Linear>(128, 10));
//     }
//     rt::Tensor forward(const rt::Tensor& x) override { return (*fc2)(rt::relu((*fc1)(x))); }
//   };
//
//   auto net = std::make_shared<Net>();
//   rt::Tensor logits = (*net)(x);            // operator(): forward inside the module's scope
//   net->named_parameters();                  // {"fc1.weight", ...}, {"fc1.bias", ...}, {"fc2.weight", ...}, ...
//   net->eval();                              // training flag off here and in every child
//   rt::nn::StateDict sd = net->state_dict(); // parameters and buffers by PyTorch's names
//   net->load_state_dict(sd);                 // copies values into the existing tensors
//   std::puts(net->to_string().c_str());      // Net(\n  (fc1): Linear(in_features=784, ...)\n  ...)
//
// Contracts
// - Names. register_parameter/register_buffer/register_module keep insertion order. A name is
//   non-empty, contains no '.', and is unique across a module's parameters, buffers and
//   children (ValueError otherwise); registering the same kind under an existing name replaces
//   the entry in place, as assigning an attribute does in PyTorch. Recursive names are dotted
//   paths in pre-order, exactly as PyTorch spells them: "0.weight",
//   "encoder.layers.0.self_attn.in_proj_weight".
// - Tensors are shared handles: a derived module keeps its own `Tensor weight` member that
//   aliases the registered entry, and load_state_dict() copies into that same storage, so the
//   member stays valid. Undefined tensors (e.g. bias=false) are not registered.
// - Memory. Modules allocate parameters AND buffers under MemoryCategory::Parameter (both are
//   model state that lives as long as the model); use empty_parameter() / a
//   MemoryCategoryGuard in custom modules to do the same.
// - Scopes (see Note [Module scope]). operator() runs forward() inside rt::ModuleScope(scope_name()),
//   so op errors and profiler events carry the module path, e.g. "encoder.layers.0.linear1".
//   A module's scope name is the name it was registered under in its parent (the last
//   registration wins if it is shared); the root's is empty, so paths read exactly like the keys
//   of named_modules(). Call children through operator(), not forward(), to keep the path.
// - forward(const Tensor&) is the single-input entry point Sequential uses; modules with other
//   signatures (MultiheadAttention) add their own forward/operator() overloads.
// - Modules are neither copyable nor movable (parameters would silently alias); hold them by
//   std::shared_ptr, or construct the root in place.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rt/export.h"
#include "rt/nn/state_dict.h"
#include "rt/op_observer.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::nn {

// What load_state_dict(strict=false) reports (with strict=true any entry is an error).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

class Module {
 public:
  explicit Module(std::string type_name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Class-ish name used by to_string(): "Linear", "Sequential", ...
  const std::string& name() const { return type_name_; }
  // The name pushed as rt::ModuleScope while this module runs ("" for a root).
  const std::string& scope_name() const { return scope_name_; }

  // ---- running ------------------------------------------------------------------------
  // Override in modules that take one tensor. The default throws NotImplementedError.
  virtual Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x);

  // ---- registration -------------------------------------------------------------------
  // Registers `t` (a leaf) and sets requires_grad_(requires_grad). Returns the same handle.
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true);
  // Buffers are state that is not trained (BatchNorm's running_mean). Non-persistent buffers
  // are left out of state_dict().
  Tensor register_buffer(const std::string& name, Tensor t, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    add_child(name, module);
    return module;
  }

  // ---- traversal (pre-order, insertion order) -----------------------------------------
  TensorList parameters(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  TensorList buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  // This module first (named ""), then every descendant. Non-owning: valid while *this lives.
  std::vector<Module*> modules();
  std::vector<std::pair<std::string, Module*>> named_modules();

  // ---- modes and gradients ------------------------------------------------------------
  virtual void train(bool on = true);  // sets the flag here and in every descendant
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Sets every parameter's .grad to undefined (PyTorch's set_to_none=True), or zeroes it.
  void zero_grad(bool set_to_none = true);

  // ---- state --------------------------------------------------------------------------
  // Parameters then persistent buffers of each module, in pre-order. Values alias the live
  // tensors (clone them for a snapshot).
  StateDict state_dict() const;
  // Copies each entry into the existing tensor (under NoGradGuard, converting dtype).
  // Shape mismatches always throw; missing/unexpected keys throw when strict. The ValueError
  // lists every problem: "Error(s) in loading state_dict for Sequential:\n  Missing key(s):
  // "1.bias".\n  Unexpected key(s): "2.weight".\n  size mismatch for 0.weight: copying a param
  // with shape [3, 5] from checkpoint, the shape in current model is [3, 4]."
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true);

  // PyTorch's repr: "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n)".
  virtual std::string to_string() const;
  // The text inside the parentheses ("in_features=4, out_features=3, bias=True").
  virtual std::string extra_repr() const { return {}; }

 protected:
  // For operator() overloads of modules with other signatures: `auto s = scope();`.
  ModuleScope scope() const { return ModuleScope(scope_name_); }
  void set_type_name(std::string n) { type_name_ = std::move(n); }
  // Called when this module is registered as a child; containers whose children are called
  // directly by the parent (ModuleList) override it to give them "layers.0"-style names.
  virtual void set_scope_name(const std::string& name) { scope_name_ = name; }
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void check_name(const std::string& name, const char* kind) const;

 private:
  friend class ModuleList;
  struct Entry {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  void collect(const std::string& prefix, bool recurse, bool buffers,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  void collect_state(const std::string& prefix, StateDict& out) const;
  void collect_modules(const std::string& prefix, std::vector<std::pair<std::string, Module*>>& out);

  std::string type_name_;
  std::string scope_name_;
  bool training_ = true;
  std::vector<Entry> parameters_;
  std::vector<Entry> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// A new uninitialised, contiguous parameter tensor allocated under MemoryCategory::Parameter.
Tensor empty_parameter(const Shape& shape, ScalarType dtype = kFloat32);

// Note [Module scope]
// operator() pushes scope_name() (skipped when empty) for the duration of forward(), so nested
// calls build "encoder.layers.0.linear1" on the thread's scope stack (rt/op_observer.h). Errors
// thrown by ops append " (in module '<path>')" and OpEvents carry the path. The root has no
// scope of its own so paths match named_modules() keys; wrap a call in ModuleScope("net") to
// prefix them.

}  // namespace rt::nn

RT_API_END
