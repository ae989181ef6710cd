// Ctrl+C during long engine calls. Note [Interrupting engine calls]
// While a LongCall runs with the GIL released, SIGINT on the importing thread's process goes to
// a C handler that requests the cancel of the importing thread (its rt::CancelToken: a signal may be
// delivered to any thread, and other threads' engine work must go on): kernels poll it and throw
// rt::InterruptedError, which errors.cpp turns into KeyboardInterrupt. Python's own handler is
// put back when the call ends. If the signal arrived but the call finished before noticing,
// the request is withdrawn and handed to Python (PyErr_SetInterrupt), so Ctrl+C is never lost
// and never cancels a later, unrelated op.
#include <csignal>
#include <mutex>
#include <thread>

#include "bind.h"

namespace rtpy {

namespace {
std::mutex g_mu;
int g_depth = 0;
struct sigaction g_previous;
volatile sig_atomic_t g_fired = 0;
std::thread::id g_main_thread;
const rt::CancelToken* g_main_cancel = nullptr;  // the importing thread's; set once, before any handler

void on_sigint(int) {
  g_fired = 1;
  g_main_cancel->request();
}

bool on_main_thread() { return std::this_thread::get_id() == g_main_thread; }
}  // namespace

// Nested LongCalls (an engine call made while one is already running without the GIL) are no-ops.
LongCall::LongCall() : saved_(PyGILState_Check() ? PyEval_SaveThread() : nullptr) {
  if (!saved_ || !on_main_thread()) return;
  std::lock_guard<std::mutex> lk(g_mu);
  if (g_depth++ == 0) {
    g_fired = 0;
    struct sigaction sa {};
    sa.sa_handler = &on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_previous);
  }
}

LongCall::~LongCall() {
  if (!saved_) return;
  bool hand_to_python = false;
  if (on_main_thread()) {
    std::lock_guard<std::mutex> lk(g_mu);
    if (--g_depth == 0) {
      sigaction(SIGINT, &g_previous, nullptr);
      if (g_fired && rt::cancel_requested()) {
        rt::clear_cancel();
        hand_to_python = std::uncaught_exceptions() == 0;
      }
      g_fired = 0;
    }
  }
  PyEval_RestoreThread(saved_);
  if (hand_to_python) PyErr_SetInterrupt();
}

void bind_interrupt(py::module_& m) {
  g_main_thread = std::this_thread::get_id();
  g_main_cancel = new rt::CancelToken(rt::CancelToken::current());  // leaked: the handler may run at exit
  // What Ctrl+C does, callable from any thread (tests): cancels the importing thread's engine work.
  m.def("_request_cancel", [] { g_main_cancel->request(); });
  m.def("_clear_cancel", [] { g_main_cancel->clear(); });
}

}  // namespace rtpy
