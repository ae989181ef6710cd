#include "rt/autograd/custom_function.h"

#include "amp/autocast_exclusion.h"
#include "autograd_meta.h"
#include "rt/error.h"
#include "rt/op_observer.h"

namespace rt::autograd {

TensorList CustomFunctionNode::apply(TensorList&& grads) {
  amp::detail::AutocastExclusionLift user_code;
  return FunctionNode::apply(std::move(grads));
}

void CustomFunctionNode::release_saved() {
  if (release_saved_) release_saved_();
  else FunctionNode::release_saved();
}

std::shared_ptr<CustomFunctionNode> record_custom_function(std::string name, const TensorList& inputs,
                                                           const TensorList& outputs, BackwardFn backward,
                                                           CustomFunctionOptions options) {
  for (const auto& o : outputs) {
    if (!o.defined()) continue;
    bool is_input = false;
    for (const auto& in : inputs) is_input = is_input || (in.defined() && in.is_same(o));
    if (!is_input) continue;
    if (o.is_leaf() && o.requires_grad())
      throw AutogradError(name + ": a leaf Variable that requires grad has been used in an in-place operation "
                                 "(the custom function returns an input it modified). Modify a clone of it instead.");
    if (o.impl().is_view && o.requires_grad())
      throw NotImplementedError(name + ": in-place modification of a view that takes part in autograd is not "
                                       "supported yet (the custom function returns a view it modified); modify a "
                                       "clone of it instead");
  }
  auto node = std::make_shared<CustomFunctionNode>(std::move(name), std::move(backward), options.materialize_grads,
                                                   std::move(options.release_saved), std::move(options.context));
  connect_node(node, inputs, outputs);
  const char* op = current_op_name();
  std::string forward = !options.forward_name.empty() ? std::move(options.forward_name) : std::string(op ? op : "");
  if (AnomalyMode::is_enabled() || !forward.empty()) node->set_forward_context(std::move(forward), current_module_path());
  return node;
}

}  // namespace rt::autograd
