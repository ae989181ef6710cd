// rt/autograd/function.h — custom ops with their own backward in C++, as libtorch's
// torch::autograd::Function (rt.autograd.Function is the Python face of the same node).
//
//   struct ScaledTanh : rt::autograd::Function<ScaledTanh> {
//     static rt::Tensor forward(rt::autograd::AutogradContext* ctx, const rt::Tensor& x, double scale) {
//       rt::Tensor y = rt::tanh(x);                  // runs with grad mode off
//       ctx->save_for_backward({y});
//       ctx->saved_data["scale"] = scale;
//       return y * scale;
//     }
//     static rt::TensorList backward(rt::autograd::AutogradContext* ctx, rt::TensorList grad_outputs) {
//       rt::Tensor y = ctx->get_saved_variables()[0];
//       double scale = std::get<double>(ctx->saved_data["scale"]);
//       return {grad_outputs[0] * scale * (1.0 - y * y), rt::Tensor()};   // one per forward argument
//     }
//   };
//   rt::Tensor out = ScaledTanh::apply(x, 2.0);     // out.grad_fn()->name() == "ScaledTanhBackward"
//
// forward's first parameter is the context; the rest are its arguments: Tensors (the inputs the node
// has edges to) and anything else. It returns a Tensor or a TensorList. backward receives one
// gradient per output and returns one per forward argument (an undefined Tensor for the others and
// for inputs that need none; extra trailing undefined Tensors are allowed).
//
// The context (libtorch's AutogradContext):
//  - save_for_backward / get_saved_variables: tensors for backward; an in-place change after forward
//    makes get_saved_variables() throw, naming the node (Note [Saved tensor versions]);
//  - saved_data: other values by name (int64_t, double, bool, std::string, Tensor; a Tensor kept
//    there is not checked and, when it is an output, keeps the graph alive: save outputs with
//    save_for_backward);
//  - needs_input_grad(i): whether forward argument i needs a gradient;
//  - mark_dirty: inputs forward modified in place and returns (their history moves to this node);
//  - mark_non_differentiable: outputs without gradients (indices, masks);
//  - set_materialize_grads(false): backward gets undefined Tensors instead of zeros for outputs
//    that received no gradient.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "rt/autograd/custom_function.h"
#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/export.h"
#include "rt/ops/creation.h"
#include "rt/ops/view.h"

RT_API_BEGIN

namespace rt::autograd {

class AutogradContext {
 public:
  using SavedValue = std::variant<int64_t, double, bool, std::string, Tensor>;

  void save_for_backward(TensorList tensors) { to_save_ = std::move(tensors); }
  // The saved tensors (detached aliases); throws AutogradError when one was modified in place
  // after forward, or when the graph was freed by a backward without retain_graph.
  TensorList get_saved_variables() const;
  std::map<std::string, SavedValue> saved_data;

  bool needs_input_grad(size_t index) const { return index < needs_input_grad_.size() && needs_input_grad_[index]; }
  void mark_dirty(const TensorList& inputs) { dirty_ = inputs; }
  void mark_non_differentiable(const TensorList& outputs) { non_differentiable_ = outputs; }
  void set_materialize_grads(bool value) { materialize_grads_ = value; }

 private:
  template <typename T>
  friend struct Function;
  std::vector<bool> needs_input_grad_;
  TensorList to_save_, dirty_, non_differentiable_;
  std::vector<SavedTensor> saved_;
  bool materialize_grads_ = true;
};

namespace detail {
// "ScaledTanh" for struct ScaledTanh (namespaces dropped, as torch names Python functions).
std::string custom_function_name(const char* mangled);
bool contains(const TensorList& list, const Tensor& t);
// One gradient per tensor argument, from backward's one per argument; checks them as torch does.
TensorList tensor_argument_grads(const std::string& node, TensorList grads, const std::vector<bool>& arg_is_tensor);
}  // namespace detail

template <typename T>
struct Function {
  template <typename... Args>
  static auto apply(Args&&... args) {
    static const std::string name = detail::custom_function_name(typeid(T).name());
    const std::vector<bool> arg_is_tensor{std::is_same_v<std::decay_t<Args>, Tensor>...};
    TensorList tensor_inputs;
    (collect(tensor_inputs, args), ...);
    auto ctx = std::make_shared<AutogradContext>();
    bool record = false;
    for (const Tensor& t : tensor_inputs) record = record || (t.defined() && t.requires_grad());
    record = record && GradMode::is_enabled();
    (ctx->needs_input_grad_.push_back(record && needs_grad(args)), ...);

    using Result = decltype(T::forward(ctx.get(), std::forward<Args>(args)...));
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, TensorList>,
                  "rt::autograd::Function: forward must return a Tensor or a TensorList");
    Result result;
    {
      NoGradGuard no_grad;
      result = T::forward(ctx.get(), std::forward<Args>(args)...);
    }
    if (!record) return result;
    TensorList outputs;
    if constexpr (std::is_same_v<Result, Tensor>) outputs = {result};
    else outputs = result;
    connect(name, ctx, tensor_inputs, outputs, arg_is_tensor);
    if constexpr (std::is_same_v<Result, Tensor>) return outputs[0];
    else return outputs;
  }

 private:
  template <typename A>
  static void collect(TensorList& tensors, const A& a) {
    if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) tensors.push_back(a);
  }
  template <typename A>
  static bool needs_grad(const A& a) {
    if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) return a.defined() && a.requires_grad();
    else return false;
  }

  static void connect(const std::string& name, const std::shared_ptr<AutogradContext>& ctx,
                      const TensorList& inputs, TensorList& outputs, const std::vector<bool>& arg_is_tensor) {
    for (const Tensor& d : ctx->dirty_) {
      if (!detail::contains(inputs, d))
        throw AutogradError(name + ": mark_dirty was given a tensor that is not an input of forward");
      if (!detail::contains(outputs, d))
        throw AutogradError(name + ": Some elements marked as dirty weren't returned as outputs; return each input "
                                   "you modified in place");
    }
    const TensorList originals = outputs;
    for (Tensor& o : outputs)  // an input returned unchanged becomes a new tensor, so the input keeps its history
      if (o.defined() && detail::contains(inputs, o) && !detail::contains(ctx->dirty_, o)) o = rt::detach(o);
    std::vector<size_t> differentiable;
    TensorList recorded;
    std::vector<OutputMeta> metas;
    for (size_t i = 0; i < outputs.size(); ++i) {
      metas.push_back({outputs[i].defined() ? outputs[i].sizes() : Shape{},
                       outputs[i].defined() ? outputs[i].dtype() : kFloat32,
                       outputs[i].defined() ? outputs[i].device() : Device()});
      if (outputs[i].defined() && !detail::contains(ctx->non_differentiable_, originals[i])) {
        differentiable.push_back(i);
        recorded.push_back(outputs[i]);
      }
    }
    const bool materialize = ctx->materialize_grads_;
    const std::string node = name + "Backward";
    auto backward = [ctx, differentiable, metas, materialize, node, arg_is_tensor,
                     defined = outputs_defined(outputs)](const TensorList& grads) -> TensorList {
      TensorList full(metas.size());
      for (size_t k = 0; k < differentiable.size(); ++k) full[differentiable[k]] = grads[k];
      if (materialize)
        for (size_t i = 0; i < full.size(); ++i)
          if (!full[i].defined() && defined[i])
            full[i] = rt::zeros(metas[i].shape, TensorOptions(metas[i].dtype).with_device(metas[i].device));
      return detail::tensor_argument_grads(node, T::backward(ctx.get(), std::move(full)), arg_is_tensor);
    };
    // A backward without retain_graph frees the saved tensors; the node stays (saved_data too, until the graph goes).
    auto release = [ctx] {
      for (SavedTensor& t : ctx->saved_) t.reset();
    };
    // The marks were for recording only. Kept, a dirty input (now an output of the node) would hold the node
    // through ctx, and ctx is held by the node: a cycle that leaks both.
    ctx->dirty_.clear();
    ctx->non_differentiable_.clear();
    record_custom_function(node, inputs, recorded, std::move(backward), {materialize, name, std::move(release), ctx});
    // Saved after the node exists, as detached aliases: ctx (held by the node) never holds the node.
    for (const Tensor& t : ctx->to_save_) {
      Tensor s = t;
      for (size_t i = 0; i < outputs.size(); ++i)
        if (t.defined() && t.is_same(originals[i])) s = outputs[i];
      ctx->saved_.emplace_back(s);
    }
    ctx->to_save_.clear();
  }

  static std::vector<bool> outputs_defined(const TensorList& outputs) {
    std::vector<bool> d;
    for (const Tensor& o : outputs) d.push_back(o.defined());
    return d;
  }
};

}  // namespace rt::autograd

RT_API_END
