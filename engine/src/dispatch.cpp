// Note [Dispatch fast path]
// OpGuard reads one relaxed atomic (g_dispatch_flags) and branches; it is zero when no
// observer is attached and no cancel was requested, so an unobserved op pays nothing else.
// When set, op_begin_slow records the op's inputs, module scope, thread and start time,
// tracks nesting depth and the current op name (for memory events), and checks for cancel.
#include "rt/dispatch.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

namespace rt {
namespace detail {
std::atomic<uint32_t> g_dispatch_flags{0};
}  // namespace detail

namespace autograd {
uint64_t peek_sequence_nr();
}

namespace {
std::mutex g_op_mu;
std::vector<OpObserver*> g_op_observers;
bool g_memory_observed = false;
bool g_anomaly_observed = false;  // anomaly mode needs op names for its messages

thread_local std::vector<std::string> t_modules;
thread_local int t_depth = 0;
thread_local const char* t_current_op = nullptr;

void update_observed_flag() {
  const bool on = !g_op_observers.empty() || g_memory_observed || g_anomaly_observed;
  if (on) detail::g_dispatch_flags.fetch_or(detail::kObserved);
  else detail::g_dispatch_flags.fetch_and(~detail::kObserved);
}

uint64_t thread_id() {
  static thread_local uint64_t id = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return id;
}
}  // namespace

namespace detail {
void set_memory_observed(bool on) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  g_memory_observed = on;
  update_observed_flag();
}

void set_anomaly_observed(bool on) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  g_anomaly_observed = on;
  update_observed_flag();
}

void op_begin_slow(OpFrame& f, const char* name, const Tensor* const* inputs, size_t n) {
  if (g_dispatch_flags.load(std::memory_order_relaxed) & kCancel) check_cancel();
  if (!(g_dispatch_flags.load(std::memory_order_relaxed) & kObserved)) return;
  f.saved_op = t_current_op ? t_current_op : "";
  t_current_op = name;
  std::vector<OpObserver*> observers;
  {
    std::lock_guard<std::mutex> lk(g_op_mu);
    observers = g_op_observers;
  }
  if (!observers.empty()) {
    auto* e = new OpEvent;
    e->name = name;
    e->inputs.reserve(n);
    for (size_t i = 0; i < n; ++i)
      if (inputs[i]->defined()) e->inputs.push_back({inputs[i]->sizes(), inputs[i]->dtype(), inputs[i]->device()});
    e->module = current_module_path();
    e->sequence_nr = int64_t(autograd::peek_sequence_nr());
    e->thread_id = thread_id();
    e->depth = t_depth;
    e->start_ns = now_ns();
    f.event = e;
    for (auto* o : observers) o->on_op_start(*e);
  }
  ++t_depth;
}

void op_end_slow(OpFrame& f) {
  --t_depth;
  t_current_op = (f.saved_op && *f.saved_op) ? f.saved_op : nullptr;
  if (f.event) {
    f.event->end_ns = now_ns();
    std::vector<OpObserver*> observers;
    {
      std::lock_guard<std::mutex> lk(g_op_mu);
      observers = g_op_observers;
    }
    for (auto* o : observers) o->on_op_end(*f.event);
    delete f.event;
    f.event = nullptr;
  }
}
}  // namespace detail

OpGuard::OpGuard(const char* name, const TensorList& inputs) {
  if (detail::g_dispatch_flags.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    std::vector<const Tensor*> ptrs;
    for (const auto& t : inputs) ptrs.push_back(&t);
    detail::op_begin_slow(frame_, name, ptrs.data(), ptrs.size());
  }
}

void add_op_observer(OpObserver* o) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  g_op_observers.push_back(o);
  update_observed_flag();
}

void remove_op_observer(OpObserver* o) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  g_op_observers.erase(std::remove(g_op_observers.begin(), g_op_observers.end(), o), g_op_observers.end());
  update_observed_flag();
}

const char* current_op_name() { return t_current_op; }

ModuleScope::ModuleScope(std::string name) { t_modules.push_back(std::move(name)); }
ModuleScope::~ModuleScope() { t_modules.pop_back(); }

std::string current_module_path() {
  std::string s;
  for (const auto& m : t_modules) {
    if (m.empty()) continue;
    if (!s.empty()) s += '.';
    s += m;
  }
  return s;
}

void request_cancel() { detail::g_dispatch_flags.fetch_or(detail::kCancel); }
void clear_cancel() { detail::g_dispatch_flags.fetch_and(~detail::kCancel); }

void check_cancel() {
  if (cancel_requested()) {
    clear_cancel();
    throw InterruptedError("interrupted: the operation was cancelled (rt::request_cancel / KeyboardInterrupt)");
  }
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rt
