// rt/debug/backward_debugger.h — pause the backward pass node by node and inspect every gradient.
//
//   rt::debug::BackwardDebugger dbg;
//   dbg.break_on_non_finite();                     // where a NaN/Inf first appears
//   dbg.break_on_module("encoder");                // any node of encoder.* (its parameters' AccumulateGrad too)
//   dbg.attach();                                  // before the forward, so nodes carry their op and module
//   rt::Tensor loss = rt::cross_entropy((*model)(x), y);
//   std::thread bw([&] { loss.backward(); });      // the studio: the interpreter thread
//   while (auto s = dbg.wait_for_pause(std::chrono::seconds(30))) {   // the GUI: paused_state() per frame
//     std::puts(s->str().c_str());
//     dbg.step();                                  // or step_over_module(), resume(), run_to(...), stop()
//   }
//   bw.join();
//   dbg.detach();
//
//   dbg.on_break([](const rt::debug::PausedState& s) {   // headless: no blocking, no second thread
//     return s.node.module == "fc2" ? rt::debug::Action::step() : rt::debug::Action::resume();
//   });
//
// Contracts
// - Observing. attach() registers the debugger with the backward engine and also observes
//   ops, because the engine records a node's forward op and module only while ops are
//   observed: attach before the forward pass, or nodes show empty forward_op/module (op and
//   module breakpoints then match node names only); while attached each op reports to it,
//   which costs an event allocation per op. One backward at a time: the first that
//   starts while attached is debugged; backward passes started meanwhile on other threads, and
//   backward passes nested inside it (autograd::grad in a hook), run unobserved.
// - Pause points. Before a node (it has received its grad_outputs; grad_inputs are empty):
//   start, step, step over, run to, pause request, Op/Module breakpoints and value breakpoints on
//   received gradients. After a node (grad_inputs filled): value breakpoints on produced
//   gradients only (see rt/debug/breakpoint.h). A backward starts in "continue" mode: it runs
//   until a breakpoint, unless set_pause_at_start(true).
// - Blocking mode (no on_break handler): the backward thread waits on a condition variable,
//   holding no debugger lock (and no Python GIL: the bindings release it for backward), until
//   another thread sends a control. While waiting it polls rt::cancel_requested() and ends with
//   rt::InterruptedError when set (Ctrl+C, the studio's interrupt).
// - Callback mode: on_break(h) makes the backward thread call h at each pause point instead of
//   blocking; h's Action decides what follows. h runs without debugger locks and may change
//   breakpoints; an exception from h aborts the backward and reaches its caller.
// - Controls may be called from any thread. While paused, they resume the backward with that
//   action (the last one sent before the backward thread wakes wins). While a backward runs
//   unpaused, they change what it does next: step()/pause() pause before the next node,
//   step_over_module() pauses at the next node outside the module of the node running now,
//   run_to() pauses before the target, resume() clears those, stop() aborts at the next pause
//   point. They return false, and do nothing, when no backward runs under the debugger.
//   step: run the current node, pause before the next one. step_over_module: pause before the
//   next node whose module is not the current node's module or inside it. run_to: pause before
//   the node with that sequence number or graph id (never, if it does not run). Breakpoints
//   fire during all of them.
// - stop() makes the backward thread throw BackwardStopped ("backward stopped by the debugger
//   ..."), from before_node/after_node, before the current node runs (or, after-node, before
//   its gradients are passed on). The engine unwinds: it frees nothing of the graph (even
//   without retain_graph, so the same backward can run again), observers get on_backward_end,
//   and leaves that already accumulated keep their .grad (zero them before running again).
// - detach() (and the destructor) unregisters, lets a backward that is running under the
//   debugger run to its end without pausing, and waits until no backward pass (any thread)
//   still holds the debugger, unless called on the debugged backward's own thread.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/autograd/engine.h"
#include "rt/debug/breakpoint.h"
#include "rt/debug/paused_state.h"
#include "rt/error.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::debug {

class BackwardStopped : public Error {
 public:
  using Error::Error;
};

class BackwardDebugger : public autograd::AutogradObserver {
 public:
  using BreakHandler = std::function<Action(const PausedState&)>;

  BackwardDebugger();
  ~BackwardDebugger() override;
  BackwardDebugger(const BackwardDebugger&) = delete;
  BackwardDebugger& operator=(const BackwardDebugger&) = delete;

  void attach();  // no-op when attached
  void detach();  // no-op when detached
  bool attached() const;

  // ---- breakpoints (any thread) -----------------------------------------------------------
  // Each returns the new breakpoint's id (1, 2, ...), enabled.
  int break_on_non_finite();
  int break_on_op(const std::string& op);              // ValueError when empty
  int break_on_module(const std::string& prefix);      // ValueError when empty
  int break_on_grad_norm(double threshold);            // ValueError unless finite and >= 0
  void set_breakpoint_enabled(int id, bool enabled);   // IndexError for an unknown id
  void remove_breakpoint(int id);                      // IndexError for an unknown id
  void clear_breakpoints();
  std::vector<Breakpoint> breakpoints() const;
  void set_pause_at_start(bool on);  // pause before the first node of each backward

  // Callback mode; an empty handler returns to blocking mode.
  void on_break(BreakHandler handler);

  // ---- controls (any thread) --------------------------------------------------------------
  bool step();
  bool step_over_module();
  bool resume();
  bool run_to(NodeTarget target);
  bool stop();
  bool pause();  // pause before the next node; no-op (true) when already paused

  // ---- state (any thread) -----------------------------------------------------------------
  std::optional<PausedState> paused_state() const;  // nullopt unless paused (blocking mode)
  // Values of one gradient of the paused node (blocking mode): elements [offset, offset + limit) of
  // grad_outputs[index] (Outputs) or grad_inputs[index] (Inputs, after a node only), flattened in row-major
  // order and converted to float64, fewer where the gradient ends. Reads at most kMaxGradientRead elements
  // (ValueError above that), copying at most the rows (along dim 0) that hold them; from a GPU only the
  // elements themselves cross to the host. nullopt unless paused; IndexError for a gradient the pause does
  // not have or that is undefined, ValueError for a negative offset or limit.
  static constexpr int64_t kMaxGradientRead = int64_t(1) << 20;
  std::optional<GradientValues> read_paused_gradient(GradientSide side, size_t index, int64_t offset,
                                                     int64_t limit) const;
  bool running() const;  // a backward is running under the debugger, paused or not
  // Blocks until the debugger is paused with no control pending (returns that state), or until
  // the backward this caller last saw paused has ended, or a backward ends during the call, or
  // `timeout` passes; nullopt then. Meant for one controlling thread (tests, scripts).
  std::optional<PausedState> wait_for_pause(std::chrono::milliseconds timeout);
  std::vector<uint64_t> execution_order() const;  // node ids reached in the current or last backward
  uint64_t backward_count() const;                // backward passes debugged so far

  // ---- AutogradObserver (the backward thread) ---------------------------------------------
  void on_backward_start(size_t num_nodes) override;
  void before_node(const autograd::NodeEvent& e) override;
  void after_node(const autograd::NodeEvent& e) override;
  void on_backward_end() override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace rt::debug

RT_API_END
