// The backward engine: dependency counting, a ready queue by sequence number, input
// buffers that sum incoming gradients, hooks, anomaly checks and observers.
#include "rt/autograd/engine.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd_meta.h"
#include "backward_streams.h"
#include "rt/amp/autocast.h"
#include "rt/autograd/custom_function.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt::autograd {
namespace {

std::mutex g_obs_mu;
std::vector<AutogradObserver*> g_observers;
std::atomic<int> g_observer_count{0};

std::vector<AutogradObserver*> observers() {
  if (g_observer_count.load(std::memory_order_relaxed) == 0) return {};
  std::lock_guard<std::mutex> lk(g_obs_mu);
  return g_observers;
}

struct ReadyOrder {  // highest sequence number first
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

bool has_non_finite(const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype())) return false;
  Tensor c = rt::to_dtype(t.cpu(), kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  for (int64_t i = 0; i < c.numel(); ++i)
    if (!std::isfinite(p[i])) return true;
  return false;
}

// Checks one gradient against what the receiving node expects; reduces broadcast dims.
Tensor validate(const Node& producer, size_t index, Tensor g, const OutputMeta& expected) {
  if (!g.defined()) return g;
  if (g.sizes() != expected.shape) {
    Shape b;
    bool ok = true;
    try {
      b = broadcast_shapes(g.sizes(), expected.shape, "backward");
    } catch (const ShapeError&) {
      ok = false;
    }
    if (!ok || b != g.sizes())
      throw AutogradError("Function " + producer.name() + " returned an invalid gradient at index " +
                          std::to_string(index) + " - got " + format_shape(g.sizes()) + " but expected shape " +
                          "compatible with " + format_shape(expected.shape));
    g = sum_to(g, expected.shape);
  }
  if (g.dtype() != expected.dtype && is_floating(expected.dtype)) g = rt::to_dtype(g, expected.dtype);
  return g;
}

// Nodes get zeros for outputs that received no gradient, except custom functions that asked for
// undefined ones (ctx.set_materialize_grads(False)).
bool materializes_grads(const Node& node) {
  const auto* custom = dynamic_cast<const CustomFunctionNode*>(&node);
  return !custom || custom->materialize_grads();
}

void add_into(TensorList& buffer, size_t slot, Tensor g) {
  if (!g.defined()) return;
  if (!buffer[slot].defined()) buffer[slot] = std::move(g);
  else buffer[slot] = rt::add(buffer[slot], g);
}

// Runs the graph from root edges. When `capture` is non-empty (autograd::grad), gradients
// flowing into those (node, slot) pairs are returned instead of being accumulated, and
// AccumulateGrad nodes do not run.
TensorList run_backward(const std::vector<Edge>& root_edges, const TensorList& root_grads, bool retain_graph,
                        const std::vector<Edge>& capture, bool allow_unused) {
  NoGradGuard no_grad;
  amp::AutocastExcludedGuard no_autocast;  // gradients keep the dtypes the forward pass chose
  // Dependencies: how many edges point at each node from nodes reachable from the roots.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep;
  std::vector<Node*> stack;
  for (const auto& e : root_edges)
    if (e.valid() && !keep.count(e.function.get())) {
      keep[e.function.get()] = e.function;
      stack.push_back(e.function.get());
    }
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const auto& e : n->next_edges()) {
      if (!e.valid()) continue;
      Node* m = e.function.get();
      ++deps[m];
      if (!keep.count(m)) {
        keep[m] = e.function;
        stack.push_back(m);
      }
    }
  }

  const bool capturing = !capture.empty();
  TensorList captured(capture.size());
  std::vector<bool> reached(capture.size(), false);

  std::unordered_map<Node*, TensorList> buffers;
  auto buffer_of = [&](Node* n) -> TensorList& {
    auto it = buffers.find(n);
    if (it == buffers.end()) it = buffers.emplace(n, TensorList(n->num_outputs())).first;
    return it->second;
  };
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    const Edge& e = root_edges[i];
    if (!e.valid()) continue;
    add_into(buffer_of(e.function.get()), e.input_nr, root_grads[i]);
  }
  for (const auto& [n, _] : keep)
    if (deps[n] == 0) ready.push(n);

  auto obs = observers();
  for (auto* o : obs) o->on_backward_start(keep.size());
  std::vector<Node*> executed;
  size_t index = 0;
  detail::BackwardStreams streams;  // Note [Backward streams]
  // Observers hear the end also when a node, a hook or an observer throws (a debugger's stop):
  // the graph is left as it was (nothing released), so the backward can run again.
  try {
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      TensorList grads = std::move(buffer_of(node));
      buffers.erase(node);
      check_cancel();

      for (size_t c = 0; c < capture.size(); ++c)
        if (capture[c].function.get() == node) {
          reached[c] = true;
          if (capture[c].input_nr < grads.size()) captured[c] = grads[capture[c].input_nr];
        }
      const bool is_accumulate = dynamic_cast<AccumulateGrad*>(node) != nullptr;
      TensorList outs;
      if (!(capturing && is_accumulate)) {
        streams.enter(*node);
        if (!is_accumulate && materializes_grads(*node))
          for (size_t i = 0; i < grads.size(); ++i)
            if (!grads[i].defined()) {
              const auto& m = node->output_meta()[i];
              grads[i] = rt::zeros(m.shape, TensorOptions(m.dtype).with_device(m.device));
            }
        for (const auto& h : node->pre_hooks()) h(*node, grads);
        NodeEvent ev{node, &grads, nullptr, index};
        for (auto* o : obs) o->before_node(ev);
        {
          NodeExecutionScope recorded(node->name(), int64_t(node->sequence_nr()));
          outs = node->apply(std::move(TensorList(grads)));
        }
        ev.grad_inputs = &outs;
        for (const auto& h : node->post_hooks()) h(*node, outs, grads);
        for (auto* o : obs) o->after_node(ev);
        executed.push_back(node);
        ++index;
        if (AnomalyMode::is_enabled())
          for (size_t i = 0; i < outs.size(); ++i)
            if (has_non_finite(outs[i])) {
              std::string where = node->forward_op().empty() ? "" : " The forward op was '" + node->forward_op() + "'";
              if (!node->forward_module().empty()) where += " in module '" + node->forward_module() + "'";
              if (!where.empty()) where += ".";
              throw AutogradError("Function '" + node->name() + "' returned nan or inf values in its " +
                                  std::to_string(i) + "th output." + where +
                                  " Hint: check that op's inputs for zeros, huge values or log of negatives.");
            }
        if (!is_accumulate && outs.size() != node->next_edges().size())
          throw AutogradError("Function " + node->name() + " returned " + std::to_string(outs.size()) +
                              " gradients; expected " + std::to_string(node->next_edges().size()));
      }
      for (size_t i = 0; i < node->next_edges().size(); ++i) {
        const Edge& e = node->next_edges()[i];
        if (!e.valid()) continue;
        Node* next = e.function.get();
        if (i < outs.size() && outs[i].defined())
          add_into(buffer_of(next), e.input_nr, validate(*node, i, outs[i], next->output_meta()[e.input_nr]));
        if (--deps[next] == 0) ready.push(next);
      }
    }
  } catch (...) {
    for (auto* o : obs) o->on_backward_end();
    throw;
  }
  for (auto* o : obs) o->on_backward_end();
  if (!retain_graph)
    for (Node* n : executed) n->release_saved();
  if (capturing && !allow_unused)
    for (size_t c = 0; c < capture.size(); ++c)
      if (!reached[c] || !captured[c].defined())
        throw AutogradError("One of the differentiated Tensors (input " + std::to_string(c) +
                            ") appears to not have been used in the graph. Set allow_unused=true if this is the "
                            "desired behavior.");
  return captured;
}

std::pair<std::vector<Edge>, TensorList> prepare_roots(const TensorList& roots, const TensorList& grad_roots) {
  if (!grad_roots.empty() && grad_roots.size() != roots.size())
    throw ValueError("backward: got " + std::to_string(grad_roots.size()) + " gradients for " +
                     std::to_string(roots.size()) + " tensors");
  std::vector<Edge> edges;
  TensorList grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    if (!r.requires_grad())
      throw AutogradError("element " + std::to_string(i) +
                          " of tensors does not require grad and does not have a grad_fn. Hint: create leaves with "
                          "requires_grad_() and do not compute the loss under NoGradGuard.");
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      if (r.numel() != 1)
        throw AutogradError("grad can be implicitly created only for scalar outputs; this tensor has shape " +
                            format_shape(r.sizes()) + ". Pass a gradient of the same shape, e.g. "
                            "y.backward(rt::ones_like(y)).");
      g = rt::ones_like(r);
    } else if (g.sizes() != r.sizes()) {
      throw ShapeError("backward: gradient of shape " + format_shape(g.sizes()) + " does not match tensor shape " +
                       format_shape(r.sizes()));
    }
    edges.push_back(gradient_edge(r));
    grads.push_back(g);
  }
  return {edges, grads};
}

}  // namespace

void backward(const TensorList& roots, const TensorList& grad_roots, bool retain_graph) {
  auto [edges, grads] = prepare_roots(roots, grad_roots);
  run_backward(edges, grads, retain_graph, {}, true);
}

TensorList grad(const TensorList& roots, const TensorList& inputs, const TensorList& grad_roots, bool retain_graph,
                bool create_graph, bool allow_unused) {
  if (create_graph)
    throw NotImplementedError("autograd::grad: create_graph=true (higher-order gradients) is not supported yet");
  std::vector<Edge> capture;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].requires_grad())
      throw AutogradError("autograd::grad: input " + std::to_string(i) + " does not require grad");
    capture.push_back(gradient_edge(inputs[i]));
  }
  auto [edges, grads] = prepare_roots(roots, grad_roots);
  return run_backward(edges, grads, retain_graph, capture, allow_unused);
}

void add_autograd_observer(AutogradObserver* o) {
  std::lock_guard<std::mutex> lk(g_obs_mu);
  g_observers.push_back(o);
  g_observer_count.store(int(g_observers.size()));
}

void remove_autograd_observer(AutogradObserver* o) {
  std::lock_guard<std::mutex> lk(g_obs_mu);
  g_observers.erase(std::remove(g_observers.begin(), g_observers.end(), o), g_observers.end());
  g_observer_count.store(int(g_observers.size()));
}

}  // namespace rt::autograd
