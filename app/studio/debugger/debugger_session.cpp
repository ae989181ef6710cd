#include "debugger/debugger_session.h"

#include <fmt/format.h>

#include <exception>
#include <mutex>
#include <thread>
#include <tuple>

#include "debugger/graph_capture.h"
#include "rt/op_observer.h"

namespace rt::studio {

// The debugger plus what the panels need from the backward thread: the graph, captured before the
// first node runs, and a grad-norm step recorded when the backward ends.
class CapturingDebugger final : public debug::BackwardDebugger {
 public:
  void on_backward_start(size_t num_nodes) override {
    {
      std::lock_guard lock(mu_);
      if (depth_ == 0) thread_ = std::this_thread::get_id();
      if (thread_ == std::this_thread::get_id()) ++depth_;
    }
    BackwardDebugger::on_backward_start(num_nodes);
  }

  void before_node(const autograd::NodeEvent& e) override {
    if (e.index == 0 && e.node && outermost()) {
      CapturedGraph g = capture_graph(*e.node);
      std::lock_guard lock(mu_);
      graph_ = std::move(g);
      ++graphs_;
    }
    BackwardDebugger::before_node(e);
  }

  void on_backward_end() override {
    BackwardDebugger::on_backward_end();
    std::lock_guard lock(mu_);
    if (depth_ == 0 || thread_ != std::this_thread::get_id() || --depth_ > 0) return;
    // A backward that ends by an exception (stopped, interrupted, an op error) records no step: the
    // engine calls on_backward_end from its handler, where current_exception() is the error.
    if (std::current_exception() || rt::cancel_requested()) return;
    const auto& params = named_.empty() ? graph_.leaves : named_;
    if (!params.empty()) norms_.record(params);
  }

  bool outermost() {
    std::lock_guard lock(mu_);
    return depth_ == 1 && thread_ == std::this_thread::get_id();
  }
  void set_named(std::vector<std::pair<std::string, Tensor>> p) {
    std::lock_guard lock(mu_);
    named_ = std::move(p);
  }
  void clear_norms() {
    std::lock_guard lock(mu_);
    norms_.clear();
  }
  uint64_t graphs() const {
    std::lock_guard lock(mu_);
    return graphs_;
  }
  autograd::GraphSnapshot graph() const {
    std::lock_guard lock(mu_);
    return graph_.snapshot;
  }
  std::pair<size_t, debug::GradNormHistory> norms() const {
    std::lock_guard lock(mu_);
    return {norms_.steps().size(), norms_};
  }
  size_t norm_steps() const {
    std::lock_guard lock(mu_);
    return norms_.steps().size();
  }

 private:
  mutable std::mutex mu_;
  std::thread::id thread_;
  int depth_ = 0;
  CapturedGraph graph_;
  uint64_t graphs_ = 0;
  std::vector<std::pair<std::string, Tensor>> named_;
  debug::GradNormHistory norms_;
};

DebuggerSession::DebuggerSession(QObject* parent) : QObject(parent), dbg_(std::make_unique<CapturingDebugger>()) {
  timer_.setInterval(kPollMs);
  connect(&timer_, &QTimer::timeout, this, &DebuggerSession::poll);
}

DebuggerSession::~DebuggerSession() {
  timer_.stop();
  dbg_->detach();
}

debug::BackwardDebugger& DebuggerSession::debugger() { return *dbg_; }

void DebuggerSession::arm(bool on) {
  if (on == armed_) return;
  armed_ = on;
  if (on) {
    dbg_->attach();
    timer_.start();
  } else {
    dbg_->detach();  // a paused backward runs to its end
    timer_.stop();
  }
  status_.armed = on;
  poll();
  emit armedChanged(on);
  emit stateChanged();
}

void DebuggerSession::set_pause_at_start(bool on) {
  pause_at_start_ = on;
  dbg_->set_pause_at_start(on);
}

int DebuggerSession::break_on_non_finite() {
  const int id = dbg_->break_on_non_finite();
  emit stateChanged();
  return id;
}
int DebuggerSession::break_on_op(const std::string& op) {
  const int id = dbg_->break_on_op(op);
  emit stateChanged();
  return id;
}
int DebuggerSession::break_on_module(const std::string& prefix) {
  const int id = dbg_->break_on_module(prefix);
  emit stateChanged();
  return id;
}
int DebuggerSession::break_on_grad_norm(double threshold) {
  const int id = dbg_->break_on_grad_norm(threshold);
  emit stateChanged();
  return id;
}
void DebuggerSession::set_breakpoint_enabled(int id, bool enabled) {
  dbg_->set_breakpoint_enabled(id, enabled);
  emit stateChanged();
}
void DebuggerSession::remove_breakpoint(int id) {
  dbg_->remove_breakpoint(id);
  emit stateChanged();
}
std::vector<debug::Breakpoint> DebuggerSession::breakpoints() const { return dbg_->breakpoints(); }

bool DebuggerSession::cont() { return dbg_->resume(); }
bool DebuggerSession::step() { return dbg_->step(); }
bool DebuggerSession::step_over() { return dbg_->step_over_module(); }
bool DebuggerSession::run_to(uint64_t graph_id) { return dbg_->run_to(debug::NodeTarget::id(graph_id)); }
bool DebuggerSession::pause() { return dbg_->pause(); }
bool DebuggerSession::stop() {
  const bool sent = dbg_->stop();
  if (sent) stop_sent_ = true;
  return sent;
}

void DebuggerSession::set_named_parameters(std::vector<std::pair<std::string, Tensor>> params) { dbg_->set_named(std::move(params)); }

void DebuggerSession::select_node(std::optional<uint64_t> graph_id) {
  if (graph_id == selected_) return;
  selected_ = graph_id;
  emit stateChanged();
}

void DebuggerSession::clear_grad_norms() {
  dbg_->clear_norms();
  norms_.clear();
  seen_norm_steps_ = 0;
  emit normsChanged();
}

std::unordered_map<uint64_t, std::string> DebuggerSession::node_labels() const {
  std::unordered_map<uint64_t, std::string> labels;
  if (!graph_) return labels;
  for (const auto& n : graph_->snapshot().nodes) {
    std::string l = n.name;
    if (!n.module.empty()) l += "  · " + n.module;
    labels.emplace(n.id, std::move(l));
  }
  return labels;
}

void DebuggerSession::poll() {
  bool changed = false;
  const bool running = dbg_->running();
  std::optional<debug::PausedState> paused = dbg_->paused_state();
  if (dbg_->graphs() != seen_graphs_) {
    seen_graphs_ = dbg_->graphs();
    graph_ = std::make_shared<viz::GraphModel>(dbg_->graph());
    emit graphChanged();
    changed = true;
  }
  const uint64_t count = dbg_->backward_count();
  if (running != was_running_ || count != seen_backwards_) {
    changed = true;
    seen_backwards_ = count;
    if (!running) {
      status_.message = stop_sent_ ? fmt::format("backward #{} stopped by the debugger", dbg_->backward_count())
                                   : fmt::format("backward #{} finished", dbg_->backward_count());
      status_.order = dbg_->execution_order();
    } else {
      status_.message.clear();
    }
    stop_sent_ = stop_sent_ && running;
    was_running_ = running;
  }
  auto key = [](const std::optional<debug::PausedState>& s) {
    return s ? std::make_tuple(s->backward, s->index, int(s->phase), s->order.size()) : std::make_tuple(uint64_t(0), size_t(0), -1, size_t(0));
  };
  if (key(paused) != key(status_.paused)) changed = true;
  status_.paused = std::move(paused);
  status_.running = running;
  status_.armed = armed_;
  int64_t hits = 0;
  for (const auto& b : dbg_->breakpoints()) hits += b.hits;
  if (hits != seen_hits_) {
    seen_hits_ = hits;
    changed = true;
  }
  if (dbg_->norm_steps() != seen_norm_steps_) {
    auto [n, history] = dbg_->norms();
    seen_norm_steps_ = n;
    norms_ = std::move(history);
    emit normsChanged();
  }
  if (changed) emit stateChanged();
}

}  // namespace rt::studio
