// rt/autograd/engine.h — running the backward pass, and watching it run.
//
//   loss.backward();                                        // grads land in leaves' .grad()
//   auto [gw] = rt::autograd::grad({loss}, {w});            // returns grads, .grad untouched
//
//   struct Stepper : rt::autograd::AutogradObserver {       // what the debugger does
//     void before_node(const rt::autograd::NodeEvent& e) override { wait_for_user(e); }
//   };
//
// Order: a node runs once all gradients for it have arrived (dependency counts); among
// ready nodes, the one with the highest sequence number runs first, so the order is
// deterministic: reverse creation order, like PyTorch's ready queue on one device.
#pragma once
#include <memory>
#include <vector>

#include "rt/autograd/node.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::autograd {

// Computes gradients of `roots` (scalars unless grad_roots are given) and accumulates them
// into the leaves' .grad(). Without retain_graph, saved tensors are freed afterwards and a
// second backward through the same graph throws.
void backward(const TensorList& roots, const TensorList& grad_roots = {}, bool retain_graph = false);

// Returns d(roots)/d(inputs) without touching .grad(). allow_unused=false throws when an
// input is not reachable from the roots. create_graph (higher-order gradients) is not
// supported yet and throws NotImplementedError.
TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots = {},
                bool retain_graph = false, bool create_graph = false, bool allow_unused = false);

struct NodeEvent {
  const Node* node = nullptr;
  const TensorList* grad_outputs = nullptr;  // incoming gradients (one per forward output)
  const TensorList* grad_inputs = nullptr;   // outgoing gradients (after_node only)
  size_t index = 0;                          // position in this backward's execution order
};

class AutogradObserver {
 public:
  virtual ~AutogradObserver() = default;
  virtual void on_backward_start(size_t /*num_nodes*/) {}
  // May block: the backward pass waits (a debugger stepping node by node).
  virtual void before_node(const NodeEvent&) {}
  virtual void after_node(const NodeEvent&) {}
  // Called when the backward ends, also when it ends by an exception (the graph is then kept).
  virtual void on_backward_end() {}
};
void add_autograd_observer(AutogradObserver* o);
void remove_autograd_observer(AutogradObserver* o);

}  // namespace rt::autograd

RT_API_END
