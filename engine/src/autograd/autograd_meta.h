// Per-tensor autograd state, created lazily (most tensors never need it).
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "rt/autograd/node.h"
#include "rt/tensor.h"

namespace rt {

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Node> grad_fn;
  std::weak_ptr<autograd::Node> grad_accumulator;  // leaves: their AccumulateGrad, made on demand
  uint32_t output_nr = 0;
  bool retains_grad = false;
  std::vector<std::pair<size_t, GradHook>> hooks;  // leaf tensor hooks
  // Non-leaf hooks live on grad_fn as pre-hooks; remove_hook sets their flag.
  std::vector<std::pair<size_t, std::shared_ptr<bool>>> grad_fn_hook_removed;
};

namespace autograd {
// Handle for tensor hooks, unique per process.
size_t next_hook_handle();
// The leaf's AccumulateGrad, created on first use.
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
// Makes `t` the `output_nr`-th output of `fn`.
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);
// Gives `node` an edge per input (taken before any output's history changes) and the outputs' meta, and
// makes each floating output its output: what record() and record_custom_function() share.
void connect_node(const std::shared_ptr<Node>& node, const TensorList& inputs, const TensorList& outputs);
}  // namespace autograd

}  // namespace rt
