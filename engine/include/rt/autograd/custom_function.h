// rt/autograd/custom_function.h — a backward node whose gradient function is user code: what
// rt.autograd.Function records (torch.autograd.Function's node, "MyFnBackward").
//
//   // Forward computed by hand, outside autograd:
//   rt::Tensor y;
//   { rt::NoGradGuard no_grad; y = rt::clamp(x, -1.0, 1.0); }
//   // Straight-through estimator: the gradient passes as if the forward were the identity.
//   rt::autograd::record_custom_function("StraightThroughBackward", {x}, {y},
//       [](const rt::TensorList& g) { return rt::TensorList{g[0]}; });
//   y.sum().backward();   // x.grad() is all ones
//
// The function receives one gradient per output and returns one per input (undefined where
// there is none). Unlike the engine's own nodes it runs as user code runs:
//  - materialize_grads = false passes an undefined Tensor for an output that received no
//    gradient (the engine's nodes, and the default, get zeros), as ctx.set_materialize_grads(False);
//  - autocast applies to its ops as the caller's regions say (the engine's own backward
//    formulas never autocast), so torch.amp.custom_bwd's region takes effect.
#pragma once
#include <any>
#include <functional>
#include <memory>
#include <string>

#include "rt/autograd/node.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::autograd {

struct CustomFunctionOptions {
  bool materialize_grads = true;
  // What the profiler and the debugger show as the node's forward op (the Function's class name);
  // empty: the op running when the node was recorded, if any.
  std::string forward_name;
  // Frees what the function saved when a backward without retain_graph is done with the node; the
  // node stays usable (a function that saved nothing can run backward again, as in torch). Without
  // it the node drops the function itself, and a second backward throws.
  std::function<void()> release_saved;
  // What forward and backward share, reachable from the node as context(): a
  // std::shared_ptr<AutogradContext> (rt::autograd::Function) or the Python ctx (rt.autograd.Function,
  // whose y.grad_fn.saved_tensors and y.grad_fn.<attribute> read it).
  std::any context;
};

class CustomFunctionNode : public FunctionNode {
 public:
  CustomFunctionNode(std::string name, BackwardFn fn, bool materialize_grads, std::function<void()> release_saved,
                     std::any context)
      : FunctionNode(std::move(name), std::move(fn)),
        materialize_grads_(materialize_grads),
        release_saved_(std::move(release_saved)),
        context_(std::move(context)) {}
  TensorList apply(TensorList&& grads) override;
  void release_saved() override;
  bool released() const override { return !release_saved_ && FunctionNode::released(); }
  bool materialize_grads() const { return materialize_grads_; }
  const std::any& context() const { return context_; }

 private:
  bool materialize_grads_;
  std::function<void()> release_saved_;
  std::any context_;
};

// Records a CustomFunctionNode for `outputs` computed from `inputs` (undefined inputs, and inputs
// that need no gradient, get no edge); sets each floating output's grad_fn, replacing any history
// an output had. An output that is also an input is rebased onto the new node (an in-place
// forward, torch's ctx.mark_dirty); that input must be neither a leaf that requires grad nor a view.
std::shared_ptr<CustomFunctionNode> record_custom_function(std::string name, const TensorList& inputs,
                                                           const TensorList& outputs, BackwardFn backward,
                                                           CustomFunctionOptions options = {});

}  // namespace rt::autograd

RT_API_END
