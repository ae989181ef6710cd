// rt/op_observer.h — the guard every op opens, and how to observe ops (observers, the profiler's recorder, module scope).
//
//   struct Printer : rt::OpObserver {
//     void on_op_end(const rt::OpEvent& e) override {
//       std::printf("%s in '%s' took %lld ns\n", e.name, e.module.c_str(),
//                   (long long)(e.end_ns - e.start_ns));
//     }
//   } printer;
//   rt::add_op_observer(&printer);     // every op now reports, nested ops too
//   { rt::ModuleScope m("encoder"); rt::ModuleScope l("layer0"); rt::relu(x); }  // module "encoder.layer0"
//   rt::remove_op_observer(&printer);
//
// Implementing an op:
//   Tensor relu(const Tensor& x) {
//     rt::OpGuard guard("relu", x);   // one relaxed atomic load when nothing observes
//     ...
//   }
// See Note [Dispatch fast path] in engine/src/op_observer.cpp. Which kernel an op runs on which
// device is rt/dispatch_stub.h's job.
//
// A profiler records through an EventRecorder instead of an OpObserver: it gets raw pointers
// and no copies, so it can record each op into a thread-local buffer without lock or allocation.
//   rt::set_event_recorder(&my_recorder);   // see Note [Event recorder]
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rt/allocator.h"
#include "rt/cancel.h"  // OpGuard checks the calling thread's cancel request
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

struct TensorMeta {
  Shape shape;
  ScalarType dtype = kFloat32;
  Device device;
};

struct OpEvent {
  const char* name = "";
  std::vector<TensorMeta> inputs;
  std::string module;        // "encoder.layer0", empty outside modules
  int64_t sequence_nr = -1;  // autograd sequence number the op's backward node gets, if any
  int64_t start_ns = 0;      // steady clock
  int64_t end_ns = 0;
  uint64_t thread_id = 0;
  int depth = 0;             // 0 for ops called by user code, 1 for ops they call, ...
};

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void on_op_start(const OpEvent&) {}
  // May block (a debugger pausing the run); must not call ops itself.
  virtual void on_op_end(const OpEvent& e) = 0;
};
void add_op_observer(OpObserver* o);
void remove_op_observer(OpObserver* o);

// ---- collectives ------------------------------------------------------------------------
// One finished collective or point-to-point operation of a process group (rt/dist), as the
// recorder sees it: rt_dist reports each one when its backend sees it complete (Note [Event
// recorder]). Pointers and views are valid only during the call.
struct CollectiveEvent {
  const char* op = "";             // "all_reduce", "send", ... (a string literal)
  std::string_view group;          // the process group's name: "default", "group 1"
  std::string_view call_site;      // "train.py:91", or empty when not known
  uint64_t seq = 0;                // sequence number in its group (point-to-point: their own count)
  bool point_to_point = false;
  int32_t peer = -1;               // root, source or destination (group rank); -1 when none
  ScalarType dtype = kFloat32;
  size_t ndim = 0;                 // of the first tensor (0 for a barrier)
  const int64_t* sizes = nullptr;  // its first min(ndim, 4) dims
  int64_t numel = 0;               // elements of every tensor the call sends or receives
  int64_t bytes = 0;               // ... and their bytes
  int64_t enqueue_ns = 0;          // steady clock: when the caller issued it,
  int64_t start_ns = 0;            // when the backend started it,
  int64_t end_ns = 0;              // and when it completed
  uint64_t thread = 0;             // the engine thread that issued it (current_thread_id())
};

// ---- event recorder (the profiler's hot path) -------------------------------------------
// Note [Event recorder]
// At most one recorder is installed. It is called on the thread where each event happens:
// - op_begin/op_end around every op (after cancellation checks), nested ops included;
// - node_begin/node_end around every autograd node the backward pass executes;
// - memory_event for every allocation and free (total_after: bytes allocated on that device
//   after the event; e.time_ns is 0: the recorder timestamps with its own clock).
// Contracts: every op_begin (node_begin) is followed by exactly one op_end (node_end) on the
// same thread, also when the op throws and also when the recorder was detached in between, so
// a recorder must stay alive for the whole process once installed. Calls must not throw, must
// not call ops, and should neither lock nor allocate. `inputs` (may hold undefined tensors) and
// `name` are valid only during the call, except op names, which are string literals.
// - collective_event once per finished collective, on whichever thread saw it complete (a gloo
//   worker, an MPI test, an event query), possibly long after the op that issued it ended. A
//   collective costs microseconds at least, so a recorder may lock and allocate here.
class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // sequence_nr: the sequence number a backward node created by this op gets, -1 in no-grad mode.
  // Returns a token (the recorder's per-thread state, or nullptr) that the matching op_end gets,
  // so a recorder finds its thread's buffer once per op rather than twice.
  virtual void* op_begin(const char* name, const Tensor* const* inputs, size_t n, int64_t sequence_nr) noexcept = 0;
  virtual void op_end(void* token) noexcept = 0;
  virtual void node_begin(std::string_view name, int64_t sequence_nr) noexcept = 0;
  virtual void node_end() noexcept = 0;
  virtual void memory_event(const MemoryEvent& e, int64_t total_after) noexcept = 0;
  virtual void collective_event(const CollectiveEvent& e) noexcept = 0;
};
// Installs `r`; nullptr detaches. Throws rt::Error when a different recorder is installed.
void set_event_recorder(EventRecorder* r);
EventRecorder* event_recorder();  // the installed one, or nullptr
// Hands `e` to the installed recorder, if any (rt_dist calls it; nothing else needs to).
void report_collective(const CollectiveEvent& e) noexcept;

namespace detail {
// g_dispatch_flags and its bits: rt/cancel.h.
// How many ops are running on this thread (nested ops count); tracked only while kObserved or
// kAutocast is set, otherwise 0.
int op_depth();
void op_begin_slow(struct OpFrame& f, const char* name, const Tensor* const* inputs, size_t n);
void op_end_slow(struct OpFrame& f);
struct OpFrame {
  OpEvent* event = nullptr;  // non-null only when an OpObserver is attached
  const char* saved_op = nullptr;
  EventRecorder* recorder = nullptr;  // the recorder op_begin went to; gets op_end
  void* recorder_token = nullptr;     // what its op_begin returned
};
}  // namespace detail

// Marks an op for observers and checks for cancellation. Construct first thing in an op.
class OpGuard {
 public:
  template <typename... Ts>
  explicit OpGuard(const char* name, const Ts&... inputs) {
    if (detail::g_dispatch_flags.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      const Tensor* ptrs[sizeof...(Ts) + 1] = {&inputs..., nullptr};
      detail::op_begin_slow(frame_, name, ptrs, sizeof...(Ts));
    }
  }
  OpGuard(const char* name, const TensorList& inputs);
  ~OpGuard() {
    if (frame_.saved_op) [[unlikely]] detail::op_end_slow(frame_);
  }
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;

 private:
  detail::OpFrame frame_;
};

// Name of the op running on this thread ("matmul"), or nullptr. Only tracked while observed.
const char* current_op_name();

// Brackets one autograd node execution for the recorder (the backward engine uses it).
class NodeExecutionScope {
 public:
  NodeExecutionScope(std::string_view node_name, int64_t sequence_nr) {
    if (detail::g_dispatch_flags.load(std::memory_order_relaxed) & detail::kObserved) [[unlikely]]
      begin(node_name, sequence_nr);
  }
  ~NodeExecutionScope() {
    if (recorder_) [[unlikely]] recorder_->node_end();
  }
  NodeExecutionScope(const NodeExecutionScope&) = delete;
  NodeExecutionScope& operator=(const NodeExecutionScope&) = delete;

 private:
  void begin(std::string_view node_name, int64_t sequence_nr);
  EventRecorder* recorder_ = nullptr;
};

// ---- module scope -----------------------------------------------------------------------
// Pushes a module name for error messages and observers; nn::Module::operator() uses it.
// Each distinct path gets a process-wide id (0 = no module), kept per thread, so recording
// the current module costs one thread-local read. Empty names leave the path unchanged.
class ModuleScope {
 public:
  explicit ModuleScope(std::string name);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  uint32_t saved_id_;
  const std::string* saved_path_;
};
// Dotted path of the modules running on this thread: "net.encoder.0", or "".
std::string current_module_path();
// Id of that path (0 for ""); module_path(id) gives the path back, from any thread.
uint32_t current_module_id();
std::string module_path(uint32_t id);  // throws rt::IndexError for an id never handed out

// The engine's id of the calling thread (OpEvent::thread_id).
uint64_t current_thread_id();

int64_t now_ns();  // steady clock, used by every event

}  // namespace rt

RT_API_END
