// rt/autograd/node.h — the backward graph: nodes, edges, saved tensors.
//
// Every differentiable op records one Node whose next_edges point at the nodes that
// produced its inputs (or at AccumulateGrad for leaves). Writing an op's backward:
//
//   Tensor mul(const Tensor& a, const Tensor& b) {
//     OpGuard guard("mul", a, b);
//     Tensor out = /* kernel */;
//     if (autograd::any_requires_grad(a, b))
//       autograd::record("MulBackward0", {a, b}, {out},
//           [sa = autograd::SavedTensor(a), sb = autograd::SavedTensor(b)](const TensorList& g) {
//             return TensorList{g[0] * sb.unpack(), g[0] * sa.unpack()};   // one per input
//           });
//     return out;
//   }
//
// The engine calls the backward function with one gradient per forward output (zeros for
// outputs that got none), in no-grad mode; it returns one gradient per forward input
// (an undefined Tensor where there is none). Gradients may have the broadcast shape:
// the engine reduces them to each input's shape with sum_to (PyTorch's behaviour).
//
// Note [Saved tensor versions]
// A SavedTensor remembers the storage version at save time. Any in-place op on that
// storage bumps the version; unpack() then throws AutogradError naming the node, like
// PyTorch's "one of the variables needed for gradient computation has been modified by an
// inplace operation". Saved tensors hold no grad_fn (they are detached aliases), so saving
// an op's own output creates no reference cycle.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rt/autograd/grad_mode.h"
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::autograd {

class Node;

struct Edge {
  std::shared_ptr<Node> function;  // null: this input needs no gradient
  uint32_t input_nr = 0;           // which input of `function` the gradient flows into
  bool valid() const { return bool(function); }
};

// Shape and dtype of one forward output: used to make zero gradients and check shapes.
struct OutputMeta {
  Shape shape;
  ScalarType dtype = kFloat32;
  Device device;
  // CUDA outputs: the stream the forward op ran on (a cudaStream_t, nullptr for the legacy
  // default stream), which the backward runs on; see Note [Backward streams] (backward_streams.h).
  void* stream = nullptr;
  bool has_stream = false;
};

// Node hooks (torch's Node.register_prehook / register_hook): a pre hook sees, and may replace, the
// gradients flowing into the node (one per forward output) before it runs; a post hook sees what
// it computed (one per forward input, which it may replace) and what it received.
using NodePreHook = std::function<void(const Node&, TensorList& grad_outputs)>;
using NodePostHook = std::function<void(const Node&, TensorList& grad_inputs, const TensorList& grad_outputs)>;

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(std::string name);  // takes the calling thread's next sequence number
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // grads: one per forward output. Returns one per next_edge.
  virtual TensorList apply(TensorList&& grads) = 0;
  // Drops saved tensors after a backward without retain_graph.
  virtual void release_saved() {}
  // True once release_saved() has made apply() unusable (a second backward would throw).
  virtual bool released() const { return false; }

  const std::string& name() const { return name_; }
  // Creation order on the creating thread, unique in the process (Note [Sequence numbers], node.cpp).
  uint64_t sequence_nr() const { return sequence_nr_; }
  std::vector<Edge>& next_edges() { return next_edges_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<OutputMeta>& output_meta() { return output_meta_; }
  const std::vector<OutputMeta>& output_meta() const { return output_meta_; }
  size_t num_outputs() const { return output_meta_.size(); }

  // Where the forward op ran: recorded while ops are observed (an OpObserver, a profiler, the debugger)
  // or in anomaly mode; empty otherwise.
  const std::string& forward_op() const { return forward_op_; }
  const std::string& forward_module() const { return forward_module_; }
  void set_forward_context(std::string op, std::string module) {
    forward_op_ = std::move(op);
    forward_module_ = std::move(module);
  }

  void add_pre_hook(NodePreHook h) { pre_hooks_.push_back(std::move(h)); }
  void add_post_hook(NodePostHook h) { post_hooks_.push_back(std::move(h)); }
  const std::vector<NodePreHook>& pre_hooks() const { return pre_hooks_; }
  const std::vector<NodePostHook>& post_hooks() const { return post_hooks_; }

 protected:
  // A node with a fixed sequence number that uses none of the thread's (AccumulateGrad: UINT64_MAX).
  Node(std::string name, uint64_t sequence_nr) : name_(std::move(name)), sequence_nr_(sequence_nr) {}

  std::string name_;
  uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::vector<OutputMeta> output_meta_;
  std::string forward_op_, forward_module_;
  std::vector<NodePreHook> pre_hooks_;
  std::vector<NodePostHook> post_hooks_;
};

// The sink for a leaf's gradient: adds it into tensor.grad() (Gradient memory category),
// after running the leaf's tensor hooks and before its post-accumulate hooks.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  TensorList apply(TensorList&& grads) override;
  Tensor variable() const { return Tensor(leaf_); }
  // Runs after .grad was updated (DDP's trigger for gradient all-reduce).
  void add_post_accumulate_hook(std::function<void(const Tensor&)> h) { post_acc_.push_back(std::move(h)); }

 private:
  std::shared_ptr<TensorImpl> leaf_;
  std::vector<std::function<void(const Tensor&)>> post_acc_;
};

class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  // The saved value; throws AutogradError if it was modified in place since (see Note above)
  // or released after backward. `node` names the node in that error.
  Tensor unpack(const Node* node = nullptr) const;
  bool defined() const { return data_.defined() || was_defined_; }
  void reset() { data_ = Tensor(); released_ = true; }

 private:
  Tensor data_;
  uint32_t version_ = 0;
  bool was_defined_ = false;
  bool released_ = false;
};

using BackwardFn = std::function<TensorList(const TensorList& grad_outputs)>;

// A node whose backward is a function object (what `record` creates).
class FunctionNode : public Node {
 public:
  FunctionNode(std::string name, BackwardFn fn) : Node(std::move(name)), fn_(std::move(fn)) {}
  TensorList apply(TensorList&& grads) override;
  void release_saved() override { fn_ = nullptr; }
  bool released() const override { return !fn_; }

 private:
  BackwardFn fn_;
};

// True when grad mode is on and any input requires grad.
bool any_requires_grad(const TensorList& inputs);
template <typename... Ts>
bool any_requires_grad(const Ts&... ts) {
  return GradMode::is_enabled() && (... || (ts.defined() && ts.requires_grad()));
}

// The edge a gradient for `t` flows into: its grad_fn, its AccumulateGrad, or none.
Edge gradient_edge(const Tensor& t);

// Records a FunctionNode for outputs computed from inputs (undefined inputs get no edge).
// Sets each output's grad_fn/output_nr and returns the node.
std::shared_ptr<Node> record(const char* name, const TensorList& inputs, const TensorList& outputs,
                             BackwardFn backward);

// Reduces a broadcast gradient to `shape` by summing the broadcast dims.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace rt::autograd

RT_API_END
