// rt/dispatch.h — the one point every op passes through, and how to observe it.
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
// See Note [Dispatch fast path] in engine/src/dispatch.cpp.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "rt/tensor.h"

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

namespace detail {
// Bit 0: an op or memory observer is attached. Bit 1: cancellation requested.
extern std::atomic<uint32_t> g_dispatch_flags;
inline constexpr uint32_t kObserved = 1u, kCancel = 2u;
void op_begin_slow(struct OpFrame& f, const char* name, const Tensor* const* inputs, size_t n);
void op_end_slow(struct OpFrame& f);
struct OpFrame {
  OpEvent* event = nullptr;  // non-null only when observed
  const char* saved_op = nullptr;
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
    if (frame_.event || frame_.saved_op) [[unlikely]] detail::op_end_slow(frame_);
  }
  OpGuard(const OpGuard&) = delete;
  OpGuard& operator=(const OpGuard&) = delete;

 private:
  detail::OpFrame frame_;
};

// Name of the op running on this thread ("matmul"), or nullptr. Only tracked while observed.
const char* current_op_name();

// ---- module scope -----------------------------------------------------------------------
// Pushes a module name for error messages and observers; nn::Module::operator() uses it.
class ModuleScope {
 public:
  explicit ModuleScope(std::string name);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;
};
// Dotted path of the modules running on this thread: "net.encoder.0", or "".
std::string current_module_path();

// ---- cancellation -----------------------------------------------------------------------
// Asks running and future ops to stop with rt::InterruptedError (Ctrl+C, the studio's
// interrupt). Long kernels poll check_cancel() between chunks of work.
void request_cancel();
void clear_cancel();
inline bool cancel_requested() {
  return (detail::g_dispatch_flags.load(std::memory_order_relaxed) & detail::kCancel) != 0;
}
void check_cancel();  // throws InterruptedError (and clears the flag) when cancel was requested

int64_t now_ns();  // steady clock, used by every event

}  // namespace rt
