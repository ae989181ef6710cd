// app/studio/kernel/python_runtime.h — CPython on the interpreter thread: initialisation (configured like
// the rtorch CLI: PyConfig.executable = RT_PYTHON_EXECUTABLE, the rustytorch package dirs first on
// sys.path), the native module `_rtstudio_native` that carries sys.stdout/sys.stderr writes and display()
// calls to the kernel, and the calls into python/cell_runner.py. Internal to rt_kernel.
//
//   PythonRuntime py(options, {.write = ..., .display = ...});  // Py_Initialize here; GIL held after
//   CellOutcome out = py.run_cell("1 + 1", "<cell 1>");          // out.result->data["text/plain"] == "2"
//
// Contracts: construct, call and destroy on one thread (the interpreter thread), holding the GIL for every
// call; construction throws KernelStartupError (message says what failed and how to fix it). The hooks
// are called with the GIL held, from whichever Python thread writes or displays, until shutdown().
#pragma once

#ifndef Py_PYTHON_H
struct _object;
using PyObject = _object;  // CPython's object type, without including Python.h in this header
#endif
#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "python_kernel.h"

struct _object;  // PyObject, without Python.h in this header

namespace rt::studio {

class KernelStartupError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CellOutcome {
  std::optional<DisplayData> result;    // the last expression's value (not None, not suppressed)
  std::optional<ExecutionError> error;  // what the cell raised
};

// SIGINTs the kernel's handler saw, and how many of them Python's handler has turned into KeyboardInterrupt
// (Note [Interrupt retry] in python_runtime.cpp). Async-signal-safe counters; callable from any thread.
struct InterruptCounts {
  uint64_t delivered = 0;
  uint64_t handled = 0;
};
InterruptCounts sigint_counts();

class PythonRuntime {
 public:
  struct Hooks {
    std::function<void(Stream, std::string_view)> write;
    std::function<void(const DisplayData&)> display;
  };

  // Note [Environment races]: glibc's setenv may move `environ` while another thread's getenv reads it
  // (Qt and fontconfig call getenv all the time on the GUI thread), which crashes the reader. So the
  // kernel's startup never writes the environment from the interpreter thread: MPLBACKEND is set here, on
  // the thread that creates the kernel, before the interpreter thread exists (idempotent); and the
  // constructor pre-initialises CPython with C-locale coercion off (coercion would setenv LC_CTYPE; in the
  // C locale Python turns on UTF-8 mode instead). Pre-initialisation itself must stay on the interpreter
  // thread: CPython takes the thread that pre-initialises it for its main thread (signal handlers).
  static void prepare_process();

  PythonRuntime(const KernelOptions& options, Hooks hooks);
  ~PythonRuntime();  // detaches the hooks; CPython stays initialised (see Note [Kernel restart])
  PythonRuntime(const PythonRuntime&) = delete;
  PythonRuntime& operator=(const PythonRuntime&) = delete;

  CellOutcome run_cell(const std::string& source, const std::string& filename);
  std::optional<ExecutionError> after_cell();  // emits and closes matplotlib figures
  void reset();                                // Note [Kernel restart], Python and engine state
  void discard_pending_interrupt();            // Note [Kernel interrupt]: a late SIGINT is dropped
  std::optional<std::string> change_directory(const std::string& dir);  // an error message on failure
  void shutdown();                             // atexit functions, then hooks detached

 private:
  _object* runner_ = nullptr;  // the _rtstudio_cell_runner module (strong reference)
  struct sigaction python_sigint_ {};  // Python's SIGINT action, installed by cell_runner.install()
};

}  // namespace rt::studio
