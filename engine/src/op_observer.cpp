// Note [Dispatch fast path]
// OpGuard reads one relaxed atomic (g_dispatch_flags) and branches; it is zero when no
// observer is attached and no cancel was requested, so an unobserved op pays nothing else.
// When set, op_begin_slow records the op's inputs, module scope, thread and start time,
// tracks nesting depth and the current op name (for memory events), and checks for cancel.
// An EventRecorder (the profiler) gets raw pointers and copies what it needs itself; the
// OpEvent copies, the observer lock and the `new` are paid only while an OpObserver is attached.
// Anomaly mode also sets the flag, only so that the current op's name is known to its messages;
// using a GPU does not (a kernel missing for a device is reported by its stub, which knows its
// name: Note [Kernel table]). While a thread has autocast on,
// kAutocast makes ops track their depth alone (Note [Autocast] in amp/autocast.cpp).
#include "rt/op_observer.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "rt/autograd/grad_mode.h"
#include "rt/error.h"

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
std::atomic<size_t> g_op_observer_count{0};
std::atomic<EventRecorder*> g_recorder{nullptr};
bool g_memory_observed = false;
bool g_anomaly_observed = false;  // anomaly mode needs op names for its messages

thread_local int t_depth = 0;
thread_local const char* t_current_op = nullptr;

void update_observed_flag() {
  const bool on = !g_op_observers.empty() || g_memory_observed || g_anomaly_observed ||
                  g_recorder.load(std::memory_order_relaxed) != nullptr;
  if (on) detail::g_dispatch_flags.fetch_or(detail::kObserved);
  else detail::g_dispatch_flags.fetch_and(~detail::kObserved);
}

// Module paths: a process-wide table (id -> dotted path) that only grows, so the strings
// stay put; each thread caches its (parent id, name) -> id lookups and never locks after the
// first time it enters a given module.
struct ModulePaths {
  std::mutex mu;
  std::deque<std::string> paths{std::string()};
  std::unordered_map<std::string, uint32_t> ids{{std::string(), 0u}};
};
ModulePaths& module_paths() {
  static auto* table = new ModulePaths;  // leaked: scopes may run during static destruction
  return *table;
}
struct ModuleChild {
  uint32_t id;
  const std::string* path;
};
thread_local std::unordered_map<uint32_t, std::unordered_map<std::string, ModuleChild>> t_module_children;
thread_local uint32_t t_module_id = 0;
thread_local const std::string* t_module_path = nullptr;

ModuleChild intern_child(uint32_t parent, const std::string* parent_path, const std::string& name) {
  auto& children = t_module_children[parent];
  if (auto it = children.find(name); it != children.end()) return it->second;
  std::string path = parent_path && !parent_path->empty() ? *parent_path + "." + name : name;
  auto& table = module_paths();
  ModuleChild child{};
  {
    std::lock_guard<std::mutex> lk(table.mu);
    auto [it, inserted] = table.ids.emplace(path, uint32_t(table.paths.size()));
    if (inserted) table.paths.push_back(std::move(path));
    child = {it->second, &table.paths[it->second]};
  }
  children.emplace(name, child);
  return child;
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
  const uint32_t flags = g_dispatch_flags.load(std::memory_order_relaxed);
  if (flags & kCancel) check_cancel();
  if (!(flags & kObserved)) {
    if (flags & kAutocast) {  // depth only (Note [Autocast]); saved_op makes op_end_slow run
      f.saved_op = t_current_op ? t_current_op : "";
      ++t_depth;
    }
    return;
  }
  f.saved_op = t_current_op ? t_current_op : "";
  t_current_op = name;
  if (auto* r = g_recorder.load(std::memory_order_acquire)) {
    f.recorder_token = r->op_begin(name, inputs, n, GradMode::is_enabled() ? int64_t(autograd::peek_sequence_nr()) : -1);
    f.recorder = r;
  }
  if (g_op_observer_count.load(std::memory_order_relaxed) == 0) {
    ++t_depth;
    return;
  }
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
    e->thread_id = current_thread_id();
    e->depth = t_depth;
    e->start_ns = now_ns();
    f.event = e;
    for (auto* o : observers) o->on_op_start(*e);
  }
  ++t_depth;
}

int op_depth() { return t_depth; }

void op_end_slow(OpFrame& f) {
  --t_depth;
  t_current_op = (f.saved_op && *f.saved_op) ? f.saved_op : nullptr;
  if (f.recorder) f.recorder->op_end(f.recorder_token);
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
  g_op_observer_count.store(g_op_observers.size());
  update_observed_flag();
}

void remove_op_observer(OpObserver* o) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  g_op_observers.erase(std::remove(g_op_observers.begin(), g_op_observers.end(), o), g_op_observers.end());
  g_op_observer_count.store(g_op_observers.size());
  update_observed_flag();
}

void set_event_recorder(EventRecorder* r) {
  std::lock_guard<std::mutex> lk(g_op_mu);
  EventRecorder* current = g_recorder.load();
  if (r && current && current != r)
    throw Error("set_event_recorder: another event recorder is already installed; detach it first "
                "(set_event_recorder(nullptr)) - only one profiler can record at a time");
  g_recorder.store(r, std::memory_order_release);
  update_observed_flag();
}

EventRecorder* event_recorder() { return g_recorder.load(std::memory_order_acquire); }

void report_collective(const CollectiveEvent& e) noexcept {
  if (auto* r = g_recorder.load(std::memory_order_acquire)) r->collective_event(e);
}

void NodeExecutionScope::begin(std::string_view node_name, int64_t sequence_nr) {
  if (auto* r = g_recorder.load(std::memory_order_acquire)) {
    r->node_begin(node_name, sequence_nr);
    recorder_ = r;
  }
}

const char* current_op_name() { return t_current_op; }

ModuleScope::ModuleScope(std::string name) : saved_id_(t_module_id), saved_path_(t_module_path) {
  if (name.empty()) return;
  const ModuleChild child = intern_child(t_module_id, t_module_path, name);
  t_module_id = child.id;
  t_module_path = child.path;
}
ModuleScope::~ModuleScope() {
  t_module_id = saved_id_;
  t_module_path = saved_path_;
}

std::string current_module_path() { return t_module_path ? *t_module_path : std::string(); }
uint32_t current_module_id() { return t_module_id; }

std::string module_path(uint32_t id) {
  auto& table = module_paths();
  std::lock_guard<std::mutex> lk(table.mu);
  if (id >= table.paths.size())
    throw IndexError("module_path: no module path has id " + std::to_string(id) + " (" +
                     std::to_string(table.paths.size()) + " paths exist); pass an id from current_module_id()");
  return table.paths[id];
}

uint64_t current_thread_id() {
  static thread_local const uint64_t id = std::hash<std::thread::id>{}(std::this_thread::get_id());
  return id;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rt
