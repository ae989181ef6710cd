// debugger/debugger_session.h — the studio's one backward debugger: arming, breakpoints, controls, and
// what the debugger, graph and grad-norm panels show (polled on the GUI thread).
//
//   auto session = std::make_shared<rt::studio::DebuggerSession>();
//   session->break_on_non_finite();
//   session->arm(true);                     // before the forward pass: nodes then carry op and module
//   // a cell runs loss.backward() on the kernel's thread; it pauses at the NaN:
//   QObject::connect(session.get(), &DebuggerSession::stateChanged, host, &ImGuiHostWidget::requestFrame);
//   session->step();                        // F11; cont() F5, step_over() F10, stop() Shift+F5
//
// Contracts
// - GUI thread only (a QObject with a poll timer), except that the debugger it owns is driven by
//   whichever thread runs the backward (the kernel's interpreter thread, a test's std::thread).
// - arm(true) attaches the debugger; arm(false) detaches it (a paused backward then runs to its end).
//   While armed a timer polls the debugger every kPollMs and emits stateChanged() when the paused node,
//   the running flag, the breakpoints' hits or the last outcome change; graphChanged() when a backward
//   under the debugger started (its graph is captured before its first node runs, on that thread);
//   normsChanged() when a finished backward added a step to grad_norms().
// - Grad norms: each backward that ends under the armed debugger without being stopped or interrupted
//   records a step: the named parameters given to set_named_parameters(), or else the graph's
//   parameters (AccumulateGrad leaves, named "<module> <shape>", see graph_capture.h).
// - Controls return what BackwardDebugger's do (false when no backward runs under the debugger).
//   stop() makes the backward thread throw rt::debug::BackwardStopped. The kernel's interrupt still
//   ends a paused backward (the debugger polls rt::cancel_requested()).
#pragma once
#include <QObject>
#include <QTimer>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rt/debug/backward_debugger.h"
#include "rt/debug/grad_norm_history.h"
#include "rt/viz/draw/debugger_view.h"
#include "rt/viz/graph_model.h"

namespace rt::studio {

class CapturingDebugger;

class DebuggerSession : public QObject {
  Q_OBJECT

 public:
  static constexpr int kPollMs = 30;

  explicit DebuggerSession(QObject* parent = nullptr);
  ~DebuggerSession() override;

  void arm(bool on);
  bool armed() const { return armed_; }
  void set_pause_at_start(bool on);
  bool pause_at_start() const { return pause_at_start_; }

  int break_on_non_finite();
  int break_on_op(const std::string& op);
  int break_on_module(const std::string& prefix);
  int break_on_grad_norm(double threshold);
  void set_breakpoint_enabled(int id, bool enabled);
  void remove_breakpoint(int id);
  std::vector<debug::Breakpoint> breakpoints() const;

  bool cont();
  bool step();
  bool step_over();
  bool run_to(uint64_t graph_id);
  bool stop();
  bool pause();

  // What the views show, as of the last poll.
  const viz::draw::DebuggerStatus& status() const { return status_; }
  std::shared_ptr<viz::GraphModel> graph() const { return graph_; }
  const debug::GradNormHistory& grad_norms() const { return norms_; }
  void set_named_parameters(std::vector<std::pair<std::string, Tensor>> params);
  void clear_grad_norms();
  // The node a view selected (graph panel click, execution-order click): "Run to selected node".
  void select_node(std::optional<uint64_t> graph_id);  // emits stateChanged when it changes
  std::optional<uint64_t> selected_node() const { return selected_; }
  // Labels for execution-order entries: graph id -> "AddmmBackward0 · fc1".
  std::unordered_map<uint64_t, std::string> node_labels() const;
  debug::BackwardDebugger& debugger();

  // Polls now (the timer calls it; tests may too).
  void poll();

 signals:
  void stateChanged();
  void graphChanged();
  void normsChanged();
  void armedChanged(bool armed);

 private:
  std::unique_ptr<CapturingDebugger> dbg_;
  QTimer timer_;
  bool armed_ = false;
  bool pause_at_start_ = false;
  bool stop_sent_ = false;
  bool was_running_ = false;
  uint64_t seen_backwards_ = 0;
  uint64_t seen_graphs_ = 0;
  uint64_t seen_norm_steps_ = 0;
  int64_t seen_hits_ = 0;
  std::optional<uint64_t> selected_;
  viz::draw::DebuggerStatus status_;
  std::shared_ptr<viz::GraphModel> graph_;
  debug::GradNormHistory norms_;
};

}  // namespace rt::studio
