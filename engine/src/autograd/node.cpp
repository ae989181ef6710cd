#include "rt/autograd/node.h"

#include <atomic>

#include "autograd_meta.h"
#include "cuda/backend.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

// Note [Sequence numbers]
// Each thread numbers the nodes it creates 0, 1, 2, ... (PyTorch keeps this counter per thread too), so
// an op can peek the number its node will get (OpGuard, for the profiler's forward-to-backward link)
// without another thread's node slipping in between, and a graph built on one thread is numbered in
// creation order whatever other threads do; the ready queue runs higher numbers first. So that numbers
// stay unique in the process (the profiler and graph snapshots key nodes by them), a thread's counter
// starts at its slot << 40: the first thread to create a node counts from 0, the next from 2^40, ...
// AccumulateGrad nodes take UINT64_MAX (run as soon as ready).
namespace rt::autograd {
namespace {
constexpr int kThreadSlotShift = 40;
std::atomic<uint64_t> g_next_thread_slot{0};
std::atomic<size_t> g_hook_handle{1};
thread_local const Node* t_running_node = nullptr;  // names the node in SavedTensor errors

struct ThreadSequence {
  uint64_t next = g_next_thread_slot.fetch_add(1) << kThreadSlotShift;
};
thread_local ThreadSequence t_sequence;
}  // namespace

uint64_t peek_sequence_nr() { return t_sequence.next; }
size_t next_hook_handle() { return g_hook_handle.fetch_add(1); }

Node::Node(std::string name) : name_(std::move(name)), sequence_nr_(t_sequence.next++) {}

// ---- AccumulateGrad -----------------------------------------------------------------------
// AccumulateGrad runs as soon as it is ready (PyTorch gives it the highest priority), and takes no number from
// the thread's sequence, so an op's node gets the number the op peeked even when it creates the leaf's.
AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf)
    : Node("AccumulateGrad", UINT64_MAX), leaf_(std::move(leaf)) {
  output_meta_.push_back({leaf_->sizes, leaf_->dtype, leaf_->storage.device()});
}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  Tensor leaf(leaf_);
  auto& meta = leaf_->autograd_meta();
  for (auto& [handle, hook] : meta.hooks) {
    Tensor r = hook(g);
    if (r.defined()) g = r;
  }
  {
    NoGradGuard no_grad;
    MemoryCategoryGuard cat(MemoryCategory::Gradient);
    if (!meta.grad.defined()) {
      // Keep our own copy: g may alias a gradient that flows elsewhere too.
      meta.grad = g.dtype() == leaf_->dtype ? rt::clone(g) : rt::to_dtype(g, leaf_->dtype);
      if (meta.grad.sizes() != leaf_->sizes) meta.grad = rt::contiguous(rt::expand(meta.grad, leaf_->sizes));
    } else {
      rt::add_(meta.grad, g);
    }
  }
  for (auto& h : post_acc_) h(leaf);
  return {};
}

// ---- SavedTensor --------------------------------------------------------------------------
SavedTensor::SavedTensor(const Tensor& t) : was_defined_(t.defined()) {
  if (!t.defined()) return;
  data_ = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  data_.impl().is_view = t.impl().is_view;
  version_ = t.version();
}

Tensor SavedTensor::unpack(const Node* node) const {
  if (!node) node = t_running_node;
  if (released_)
    throw AutogradError(
        "Trying to backward through the graph a second time (or directly access saved tensors after they have "
        "already been freed). Saved intermediate values of the graph are freed when you call backward(). Specify "
        "retain_graph=true if you need to backward through the graph a second time.");
  if (!data_.defined()) return Tensor();
  if (data_.version() != version_) {
    std::string who = node ? node->name() : std::string("a backward node");
    std::string fwd = node && !node->forward_op().empty() ? " (saved by the forward op '" + node->forward_op() + "'" +
                                                                (node->forward_module().empty() ? "" : " in module '" + node->forward_module() + "'") + ")"
                                                          : "";
    throw AutogradError("one of the variables needed for gradient computation has been modified by an inplace "
                        "operation: a tensor of shape " + format_shape(data_.sizes()) + " saved by " + who + fwd +
                        " is at version " + std::to_string(data_.version()) + "; expected version " +
                        std::to_string(version_) + ". Hint: replace the in-place op (e.g. x.relu_()) with its "
                        "out-of-place form, or clone() the tensor before modifying it.");
  }
  return data_;
}

// ---- FunctionNode ---------------------------------------------------------------------------
TensorList FunctionNode::apply(TensorList&& grads) {
  if (!fn_)
    throw AutogradError("Trying to backward through the graph a second time (" + name_ +
                        "): saved tensors were freed by the first backward. Specify retain_graph=true on the first "
                        "call if you need to backward twice.");
  struct Running {
    const Node* saved = t_running_node;
    explicit Running(const Node* n) { t_running_node = n; }
    ~Running() { t_running_node = saved; }
  } running(this);
  return fn_(grads);
}

// ---- recording ------------------------------------------------------------------------------
bool any_requires_grad(const TensorList& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const auto& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  auto& meta = leaf.impl().autograd_meta();
  if (auto acc = meta.grad_accumulator.lock()) return acc;
  auto acc = std::make_shared<AccumulateGrad>(leaf.impl_ptr());
  meta.grad_accumulator = acc;
  return acc;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  if (const auto& fn = t.grad_fn()) return {fn, t.output_nr()};
  return {grad_accumulator(t), 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  auto& meta = t.impl().autograd_meta();
  meta.grad_fn = fn;
  meta.output_nr = output_nr;
}

void connect_node(const std::shared_ptr<Node>& node, const TensorList& inputs, const TensorList& outputs) {
  node->next_edges().reserve(inputs.size());
  for (const auto& t : inputs) node->next_edges().push_back(gradient_edge(t));  // before any output is rebased
  node->output_meta().reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    const bool on_gpu = o.defined() && o.device().is_cuda();
    node->output_meta().push_back({o.sizes(), o.dtype(), o.device(), on_gpu ? cuda::detail::stream(o.device()) : nullptr, on_gpu});
    if (o.defined() && is_floating(o.dtype())) set_history(o, node, uint32_t(i));
  }
}

std::shared_ptr<Node> record(const char* name, const TensorList& inputs, const TensorList& outputs,
                             BackwardFn backward) {
  auto node = std::make_shared<FunctionNode>(name, std::move(backward));
  connect_node(node, inputs, outputs);
  const char* op = current_op_name();
  if (AnomalyMode::is_enabled() || op)
    node->set_forward_context(op ? op : "", current_module_path());
  return node;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - int64_t(shape.size());
  if (lead < 0)
    throw ShapeError("sum_to: gradient of shape " + format_shape(grad.sizes()) + " has fewer dims than " +
                     format_shape(shape));
  Shape dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && grad.sizes()[size_t(lead) + i] != 1) dims.push_back(lead + int64_t(i));
  Tensor r = dims.empty() ? grad : rt::sum(grad, dims, /*keepdim=*/true);
  if (lead > 0 || r.sizes() != shape) r = rt::reshape(r, shape);
  return r;
}

}  // namespace rt::autograd

// ---- tensor hooks (declared in rt/tensor.h) -------------------------------------------------
namespace rt {

size_t Tensor::register_hook(GradHook hook) const {
  if (!requires_grad())
    throw AutogradError("register_hook: cannot register a hook on a tensor that doesn't require gradient");
  const size_t handle = autograd::next_hook_handle();
  if (is_leaf()) {
    impl().autograd_meta().hooks.emplace_back(handle, std::move(hook));
  } else {
    const uint32_t nr = output_nr();
    auto shared = std::make_shared<GradHook>(std::move(hook));
    auto removed = std::make_shared<bool>(false);
    grad_fn()->add_pre_hook([nr, shared, removed](const autograd::Node&, TensorList& grads) {
      if (*removed || nr >= grads.size() || !grads[nr].defined()) return;
      Tensor r = (*shared)(grads[nr]);
      if (r.defined()) grads[nr] = r;
    });
    impl().autograd_meta().grad_fn_hook_removed.emplace_back(handle, removed);
  }
  return handle;
}

void Tensor::remove_hook(size_t handle) const {
  if (!impl().autograd) return;
  auto& hooks = impl().autograd->hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it)
    if (it->first == handle) {
      hooks.erase(it);
      return;
    }
  for (auto& [h, removed] : impl().autograd->grad_fn_hook_removed)
    if (h == handle) *removed = true;
}

}  // namespace rt
