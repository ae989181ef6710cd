#include "rt/debug/backward_debugger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "rt/autograd/grad_mode.h"
#include "rt/op_observer.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt::debug {
namespace {

using autograd::AccumulateGrad;
using autograd::Node;
using autograd::NodeEvent;

// Observing ops makes the engine record each node's forward op and module scope.
struct ForwardContext : OpObserver {
  void on_op_end(const OpEvent&) override {}
};

enum class Mode { Run, Start, Step, StepOver, RunTo, Pause };

using Slot = std::pair<const Node*, uint32_t>;
struct SlotHash {
  size_t operator()(const Slot& s) const { return std::hash<const void*>()(s.first) * 31 + s.second; }
};

// What a producer handed each (node, input slot): whether non-finite, and the largest norm.
struct Handed {
  bool non_finite = false;
  double norm = 0;
};

std::vector<GradientStats> stats_of(const TensorList* grads, int bins) {
  std::vector<GradientStats> out;
  if (!grads) return out;
  out.reserve(grads->size());
  for (const auto& g : *grads) out.push_back(gradient_stats(g, bins));
  return out;
}

bool any_value_breakpoint(const std::vector<Breakpoint>& bps) {
  for (const auto& b : bps)
    if (b.enabled && (b.kind == BreakpointKind::NonFinite || b.kind == BreakpointKind::GradNorm)) return true;
  return false;
}

std::string count_text(const GradientStats& s) {
  std::string t;
  if (s.nan_count) t += fmt::format("{} NaN", s.nan_count);
  if (s.inf_count) t += fmt::format("{}{} Inf", t.empty() ? "" : ", ", s.inf_count);
  return t;
}

}  // namespace

struct BackwardDebugger::State {
  mutable std::mutex mu;
  std::condition_variable cv;  // pauses, controls, backward ends
  ForwardContext forward_context;

  // Configuration.
  bool attached = false;
  std::vector<Breakpoint> breakpoints;
  int next_id = 1;
  bool pause_at_start = false;
  BreakHandler handler;

  // The backward under observation.
  int active_passes = 0;  // backward passes that hold this observer (any thread)
  bool in_backward = false;
  std::thread::id thread;
  int nested = 0;
  uint64_t serial = 0, ended_serial = 0, ended_count = 0;
  size_t num_nodes = 0;
  Mode mode = Mode::Run;
  std::string step_over_module;
  NodeTarget target;
  bool stop_requested = false;
  std::string current_module;
  std::vector<uint64_t> order;

  // Pauses (blocking mode).
  std::optional<PausedState> paused;
  // The paused node's gradients, alive while the backward thread waits in pause() (it cannot go on
  // without mu, so a reader holding mu sees them unchanged).
  const TensorList* paused_outputs = nullptr;
  const TensorList* paused_inputs = nullptr;
  std::optional<Action> pending;
  uint64_t last_wait_serial = 0;

  // Touched only by the backward thread.
  std::unordered_map<const Node*, std::string> leaf_modules;
  std::unordered_map<Slot, Handed, SlotHash> handed;

  bool observing() const { return attached && in_backward && nested == 0 && thread == std::this_thread::get_id(); }

  Breakpoint& find(int id) {
    for (auto& b : breakpoints)
      if (b.id == id) return b;
    std::string ids;
    for (const auto& b : breakpoints) ids += (ids.empty() ? "" : ", ") + std::to_string(b.id);
    throw IndexError(fmt::format("debugger: no breakpoint with id {} (ids: {})", id, ids.empty() ? "none" : ids));
  }

  int add(BreakpointKind kind, std::string pattern = {}, double threshold = 0) {
    Breakpoint b;
    b.id = next_id++;
    b.kind = kind;
    b.pattern = std::move(pattern);
    b.threshold = threshold;
    breakpoints.push_back(std::move(b));
    return breakpoints.back().id;
  }

  // Sets what the backward does after the current node (module: that node's module).
  void apply(const Action& a, const std::string& module) {
    switch (a.kind) {
      case Action::Kind::Step: mode = Mode::Step; break;
      case Action::Kind::StepOverModule:
        mode = Mode::StepOver;
        step_over_module = module;
        break;
      case Action::Kind::Continue: mode = Mode::Run; break;
      case Action::Kind::RunToNode:
        mode = Mode::RunTo;
        target = a.target;
        break;
      case Action::Kind::Stop: stop_requested = true; break;
    }
  }

  std::optional<PauseReason> mode_reason(const NodeInfo& n, size_t index) const {
    switch (mode) {
      case Mode::Run: return std::nullopt;
      case Mode::Start: return index == 0 ? std::optional(PauseReason::Start) : std::optional(PauseReason::Step);
      case Mode::Step: return PauseReason::Step;
      case Mode::Pause: return PauseReason::PauseRequest;
      case Mode::StepOver:
        return module_within(n.module, step_over_module) ? std::nullopt : std::optional(PauseReason::StepOverModule);
      case Mode::RunTo: return target.matches(n) ? std::optional(PauseReason::RunToNode) : std::nullopt;
    }
    return std::nullopt;
  }

  NodeInfo describe(const Node* node) const {
    NodeInfo i;
    i.id = reinterpret_cast<uint64_t>(node);
    i.name = node->name();
    i.sequence_nr = node->sequence_nr();
    i.forward_op = node->forward_op();
    i.module = node->forward_module();
    i.is_leaf = dynamic_cast<const AccumulateGrad*>(node) != nullptr;
    if (i.is_leaf && i.module.empty())
      if (auto it = leaf_modules.find(node); it != leaf_modules.end()) i.module = it->second;
    return i;
  }

  [[noreturn]] void throw_stopped(std::unique_lock<std::mutex>& lk, const NodeInfo& n, size_t index) {
    stop_requested = false;
    lk.unlock();
    throw BackwardStopped(fmt::format("backward stopped by the debugger at node {} of this backward: {}", index + 1,
                                      n.str()));
  }

  // Pauses the backward thread at `st` until a control (or the handler) says what to do next.
  // Called with `lk` held; returns with it held, or throws (stop, interrupt, handler error).
  // grads: the node's received and (after the node) produced gradients, readable while paused.
  void pause(std::unique_lock<std::mutex>& lk, PausedState st, const TensorList* outputs, const TensorList* inputs) {
    const NodeInfo node = st.node;
    const size_t index = st.index;
    if (stop_requested) throw_stopped(lk, node, index);
    Action action;
    if (handler) {
      BreakHandler h = handler;
      lk.unlock();
      action = h(st);
      lk.lock();
    } else {
      paused = std::move(st);
      paused_outputs = outputs;
      paused_inputs = inputs;
      pending.reset();
      cv.notify_all();
      while (!pending) {
        cv.wait_for(lk, std::chrono::milliseconds(50));
        if (!pending && rt::cancel_requested()) {
          std::optional<PausedState> shown = std::move(paused);
          paused.reset();
          paused_outputs = paused_inputs = nullptr;
          lk.unlock();
          rt::check_cancel();  // throws InterruptedError unless the request was withdrawn meanwhile
          lk.lock();
          paused = std::move(shown);
          paused_outputs = outputs;
          paused_inputs = inputs;
        }
      }
      action = *pending;
      pending.reset();
      paused.reset();
      paused_outputs = paused_inputs = nullptr;
    }
    if (!attached) action = Action::resume();
    apply(action, current_module);
    if (stop_requested) throw_stopped(lk, node, index);
  }

  bool control(const Action& a) {
    std::lock_guard<std::mutex> lk(mu);
    if (!in_backward || !attached) return false;
    if (paused) {
      pending = a;
      cv.notify_all();
    } else {
      apply(a, current_module);
    }
    return true;
  }
};

BackwardDebugger::BackwardDebugger() : s_(std::make_unique<State>()) {}

BackwardDebugger::~BackwardDebugger() { detach(); }

void BackwardDebugger::attach() {
  {
    std::lock_guard<std::mutex> lk(s_->mu);
    if (s_->attached) return;
    s_->attached = true;
  }
  add_op_observer(&s_->forward_context);
  autograd::add_autograd_observer(this);
}

void BackwardDebugger::detach() {
  {
    std::lock_guard<std::mutex> lk(s_->mu);
    if (!s_->attached) return;
    s_->attached = false;
  }
  autograd::remove_autograd_observer(this);
  remove_op_observer(&s_->forward_context);
  std::unique_lock<std::mutex> lk(s_->mu);
  if (s_->paused) s_->pending = Action::resume();
  s_->cv.notify_all();
  if (!(s_->in_backward && s_->thread == std::this_thread::get_id()))
    s_->cv.wait(lk, [&] { return s_->active_passes == 0; });
}

bool BackwardDebugger::attached() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->attached;
}

// ---- breakpoints ----------------------------------------------------------------------------
int BackwardDebugger::break_on_non_finite() {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->add(BreakpointKind::NonFinite);
}

int BackwardDebugger::break_on_op(const std::string& op) {
  if (op.empty()) throw ValueError("break_on_op: the op name is empty (e.g. \"linear\" or \"AddmmBackward0\")");
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->add(BreakpointKind::Op, op);
}

int BackwardDebugger::break_on_module(const std::string& prefix) {
  if (prefix.empty()) throw ValueError("break_on_module: the module path is empty (e.g. \"encoder.layer0\")");
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->add(BreakpointKind::Module, prefix);
}

int BackwardDebugger::break_on_grad_norm(double threshold) {
  if (!std::isfinite(threshold) || threshold < 0)
    throw ValueError(fmt::format("break_on_grad_norm: the threshold must be finite and >= 0, got {}", threshold));
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->add(BreakpointKind::GradNorm, {}, threshold);
}

void BackwardDebugger::set_breakpoint_enabled(int id, bool enabled) {
  std::lock_guard<std::mutex> lk(s_->mu);
  s_->find(id).enabled = enabled;
}

void BackwardDebugger::remove_breakpoint(int id) {
  std::lock_guard<std::mutex> lk(s_->mu);
  const Breakpoint& b = s_->find(id);
  s_->breakpoints.erase(s_->breakpoints.begin() + (&b - s_->breakpoints.data()));
}

void BackwardDebugger::clear_breakpoints() {
  std::lock_guard<std::mutex> lk(s_->mu);
  s_->breakpoints.clear();
}

std::vector<Breakpoint> BackwardDebugger::breakpoints() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->breakpoints;
}

void BackwardDebugger::set_pause_at_start(bool on) {
  std::lock_guard<std::mutex> lk(s_->mu);
  s_->pause_at_start = on;
}

void BackwardDebugger::on_break(BreakHandler handler) {
  std::lock_guard<std::mutex> lk(s_->mu);
  s_->handler = std::move(handler);
}

// ---- controls -------------------------------------------------------------------------------
bool BackwardDebugger::step() { return s_->control(Action::step()); }
bool BackwardDebugger::step_over_module() { return s_->control(Action::step_over_module()); }
bool BackwardDebugger::resume() { return s_->control(Action::resume()); }
bool BackwardDebugger::run_to(NodeTarget target) { return s_->control(Action::run_to(target)); }
bool BackwardDebugger::stop() { return s_->control(Action::stop()); }

bool BackwardDebugger::pause() {
  std::lock_guard<std::mutex> lk(s_->mu);
  if (!s_->in_backward || !s_->attached) return false;
  if (!s_->paused) s_->mode = Mode::Pause;
  return true;
}

// ---- state ----------------------------------------------------------------------------------
std::optional<GradientValues> BackwardDebugger::read_paused_gradient(GradientSide side, size_t index, int64_t offset,
                                                                     int64_t limit) const {
  if (offset < 0 || limit < 0)
    throw ValueError(fmt::format("read_paused_gradient: offset {} and limit {} must be >= 0", offset, limit));
  if (limit > kMaxGradientRead)
    throw ValueError(fmt::format("read_paused_gradient: limit {} is over the {} elements one read may copy; read in "
                                 "pieces (offset += limit)", limit, kMaxGradientRead));
  std::lock_guard<std::mutex> lk(s_->mu);  // the backward thread stays paused while this reads
  if (!s_->paused) return std::nullopt;
  const TensorList* grads = side == GradientSide::Outputs ? s_->paused_outputs : s_->paused_inputs;
  const size_t count = grads ? grads->size() : 0;
  if (index >= count)
    throw IndexError(fmt::format("read_paused_gradient: the paused node has {} {}{}; index {} is out of range", count,
                                 side_name(side),
                                 side == GradientSide::Inputs && !grads ? " (they exist only after the node ran)" : "",
                                 index));
  const Tensor& g = (*grads)[index];
  if (!g.defined())
    throw IndexError(fmt::format("read_paused_gradient: {}[{}] is undefined (no gradient flows there)",
                                 side_name(side), index));
  GradientValues v;
  v.shape.assign(g.sizes().begin(), g.sizes().end());
  v.dtype = g.dtype();
  v.numel = g.numel();
  v.offset = offset;
  const int64_t n = std::max<int64_t>(0, std::min(limit, v.numel - offset));
  if (n == 0) return v;
  NoGradGuard no_grad;  // a gradient of a create_graph backward requires grad: the copy needs no graph
  // Only the rows (along dim 0) that hold the range are flattened: a view where g is contiguous, a copy of
  // those rows where it is not, never of the whole gradient.
  Tensor rows = g.dim() == 0 ? g.reshape({1}) : g;
  const int64_t row = v.numel / rows.sizes()[0];
  const int64_t first = offset / row, last = (offset + n - 1) / row;
  rows = rows.narrow(0, first, last - first + 1).reshape({(last - first + 1) * row});
  const Tensor piece = rows.narrow(0, offset - first * row, n).cpu().to(kFloat64).contiguous();
  const double* p = piece.data_ptr<double>();
  v.values.assign(p, p + n);
  return v;
}

std::optional<PausedState> BackwardDebugger::paused_state() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->paused;
}

bool BackwardDebugger::running() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->in_backward;
}

std::optional<PausedState> BackwardDebugger::wait_for_pause(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(s_->mu);
  const uint64_t ends_at_call = s_->ended_count;
  std::optional<PausedState> result;
  s_->cv.wait_for(lk, timeout, [&] {
    if (s_->paused && !s_->pending) {
      result = s_->paused;
      return true;
    }
    return (s_->last_wait_serial != 0 && s_->ended_serial >= s_->last_wait_serial) || s_->ended_count != ends_at_call;
  });
  s_->last_wait_serial = result ? result->backward : 0;
  return result;
}

std::vector<uint64_t> BackwardDebugger::execution_order() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->order;
}

uint64_t BackwardDebugger::backward_count() const {
  std::lock_guard<std::mutex> lk(s_->mu);
  return s_->serial;
}

// ---- the backward thread --------------------------------------------------------------------
void BackwardDebugger::on_backward_start(size_t num_nodes) {
  std::lock_guard<std::mutex> lk(s_->mu);
  ++s_->active_passes;
  if (!s_->attached) return;
  if (s_->in_backward) {
    if (s_->thread == std::this_thread::get_id()) ++s_->nested;
    return;
  }
  State& s = *s_;
  s.in_backward = true;
  s.thread = std::this_thread::get_id();
  s.nested = 0;
  ++s.serial;
  s.num_nodes = num_nodes;
  s.mode = s.pause_at_start ? Mode::Start : Mode::Run;
  s.stop_requested = false;
  s.current_module.clear();
  s.order.clear();
  s.leaf_modules.clear();
  s.handed.clear();
}

void BackwardDebugger::before_node(const NodeEvent& e) {
  State& s = *s_;
  std::unique_lock<std::mutex> lk(s.mu);
  if (!s.observing()) return;
  const NodeInfo node = s.describe(e.node);
  s.order.push_back(node.id);
  s.current_module = node.module;
  if (s.stop_requested) s.throw_stopped(lk, node, e.index);
  const std::vector<Breakpoint> bps = s.breakpoints;
  lk.unlock();

  std::vector<GradientStats> received;
  if (any_value_breakpoint(bps)) received = stats_of(e.grad_outputs, 0);
  std::vector<int> fired;
  std::string why;
  for (const auto& b : bps) {
    if (!b.enabled) continue;
    std::string detail;
    if (b.kind == BreakpointKind::Op || b.kind == BreakpointKind::Module) {
      if (!b.matches(node)) continue;
    } else {
      for (size_t j = 0; j < received.size() && detail.empty(); ++j) {
        auto it = s.handed.find({e.node, uint32_t(j)});
        const Handed h = it == s.handed.end() ? Handed{} : it->second;
        if (b.kind == BreakpointKind::NonFinite && received[j].has_non_finite() && !h.non_finite)
          detail = fmt::format("grad_outputs[{}] has {}", j, count_text(received[j]));
        if (b.kind == BreakpointKind::GradNorm && received[j].norm > b.threshold && !(h.norm > b.threshold))
          detail = fmt::format("grad_outputs[{}] norm {:.6g}", j, received[j].norm);
      }
      if (detail.empty()) continue;
    }
    fired.push_back(b.id);
    why += (why.empty() ? "" : "; ") + b.str() + (detail.empty() ? "" : ": " + detail);
  }

  lk.lock();
  const std::optional<PauseReason> reason = s.mode_reason(node, e.index);
  if (!reason && fired.empty()) return;
  for (auto& b : s.breakpoints)
    for (int id : fired)
      if (b.id == id) ++b.hits;
  PausedState st;
  st.node = node;
  st.index = e.index;
  st.num_nodes = s.num_nodes;
  st.backward = s.serial;
  st.phase = PausePhase::BeforeNode;
  st.reason = fired.empty() ? *reason : PauseReason::Breakpoint;
  st.breakpoints = fired;
  st.description = fired.empty() ? std::string(reason_name(*reason)) : why;
  st.order = s.order;
  lk.unlock();
  st.grad_outputs = stats_of(e.grad_outputs, 32);
  lk.lock();
  s.pause(lk, std::move(st), e.grad_outputs, nullptr);
}

void BackwardDebugger::after_node(const NodeEvent& e) {
  State& s = *s_;
  std::unique_lock<std::mutex> lk(s.mu);
  if (!s.observing()) return;
  const NodeInfo node = s.describe(e.node);
  if (s.stop_requested) s.throw_stopped(lk, node, e.index);
  const std::vector<Breakpoint> bps = s.breakpoints;
  lk.unlock();

  const auto& edges = e.node->next_edges();
  for (const auto& edge : edges)
    if (edge.valid() && dynamic_cast<const AccumulateGrad*>(edge.function.get()))
      s.leaf_modules[edge.function.get()] = node.module;
  if (!any_value_breakpoint(bps) || !e.grad_inputs) return;

  const std::vector<GradientStats> produced = stats_of(e.grad_inputs, 0);
  bool received_non_finite = false;
  for (const auto& g : stats_of(e.grad_outputs, 0)) received_non_finite |= g.has_non_finite();
  for (size_t i = 0; i < produced.size() && i < edges.size(); ++i) {
    if (!edges[i].valid() || !produced[i].defined) continue;
    Handed& h = s.handed[{edges[i].function.get(), edges[i].input_nr}];
    h.non_finite |= produced[i].has_non_finite();
    if (!(produced[i].norm <= h.norm)) h.norm = produced[i].norm;  // NaN sticks
  }

  std::vector<int> fired;
  std::string why;
  for (const auto& b : bps) {
    if (!b.enabled) continue;
    std::string detail;
    for (size_t i = 0; i < produced.size() && detail.empty(); ++i) {
      if (b.kind == BreakpointKind::NonFinite && produced[i].has_non_finite() && !received_non_finite)
        detail = fmt::format("grad_inputs[{}] has {}", i, count_text(produced[i]));
      if (b.kind == BreakpointKind::GradNorm && produced[i].norm > b.threshold)
        detail = fmt::format("grad_inputs[{}] norm {:.6g}", i, produced[i].norm);
    }
    if (detail.empty()) continue;
    fired.push_back(b.id);
    why += (why.empty() ? "" : "; ") + b.str() + ": " + detail;
  }
  if (fired.empty()) return;

  PausedState st;
  st.node = node;
  st.index = e.index;
  st.phase = PausePhase::AfterNode;
  st.reason = PauseReason::Breakpoint;
  st.breakpoints = fired;
  st.description = why;
  st.grad_outputs = stats_of(e.grad_outputs, 32);
  st.grad_inputs = stats_of(e.grad_inputs, 32);
  lk.lock();
  for (auto& b : s.breakpoints)
    for (int id : fired)
      if (b.id == id) ++b.hits;
  st.num_nodes = s.num_nodes;
  st.backward = s.serial;
  st.order = s.order;
  s.pause(lk, std::move(st), e.grad_outputs, e.grad_inputs);
}

void BackwardDebugger::on_backward_end() {
  std::lock_guard<std::mutex> lk(s_->mu);
  State& s = *s_;
  --s.active_passes;
  s.cv.notify_all();
  if (!s.in_backward || s.thread != std::this_thread::get_id()) return;
  if (s.nested > 0) {
    --s.nested;
    return;
  }
  s.in_backward = false;
  s.ended_serial = s.serial;
  ++s.ended_count;
  s.paused.reset();
  s.paused_outputs = s.paused_inputs = nullptr;
  s.pending.reset();
  s.cv.notify_all();
}

}  // namespace rt::debug
