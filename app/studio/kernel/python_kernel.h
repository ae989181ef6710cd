// app/studio/kernel/python_kernel.h — the studio's Python kernel: CPython embedded in-process on its own
// interpreter thread, running notebook cells from a queue (DESIGN §3 "Studio threads"). Qt-free; the Qt
// wrapper that re-emits everything as signals on the GUI thread is qt/kernel_client.h.
//
//   using namespace rt::studio;
//   struct Printer : KernelListener {
//     void on_stream(RequestId id, Stream s, const std::string& text) override { fmt::print("{}", text); }
//     void on_finished(const ExecutionSummary& s) override { /* s.status, s.execution_count, s.seconds */ }
//   } printer;
//   PythonKernel kernel;                          // one per process; starts the interpreter thread
//   kernel.add_listener(&printer);
//   auto id = kernel.execute("import rustytorch as rt\nx = rt.ones(2, 3)\nx.sum()", "1");
//   // -> on_started(id, 1), on_result(id, 1, {"text/plain": "tensor(6.)"}), on_finished({id, ok, 1, ...})
//   kernel.interrupt();                            // stops the running cell, aborts the queued ones
//   kernel.restart();                              // fresh namespace and engine state, same interpreter
//   kernel.request_variables([](VariablesSnapshot s) { /* on the kernel's inspector thread */ });
//
// Note [Kernel threads]
// - The interpreter thread initialises CPython (so it is Python's main thread: it receives SIGINT and
//   `time.sleep` is interruptible), imports `threading` first, then runs requests one at a time.
// - The output thread reads fd 1 and fd 2 (redirected into pipes when KernelOptions::capture_fd_output),
//   so C/C++ writes (printf, std::cout, the engine's warnings) reach the listener while a cell runs; it
//   also copies them to the original fds when KernelOptions::echo_output.
// - The inspector thread answers request_variables/request_tensor_stats: it takes the GIL briefly, which
//   a running cell gives up every switch interval (5 ms) and during every long engine op, so snapshots
//   arrive while a cell runs and never wait for it to finish.
// - No method of this class takes the GIL on the calling thread: all of them may be called from the GUI
//   thread (and from listener callbacks, except remove_listener and the destructor).
//
// Note [Kernel output order]
// Listener callbacks are serialised (never two at once) and come from kernel threads, never from the
// thread that called execute(). Per request the order is: on_started, then on_stream / on_display /
// on_result / on_error in the order they happened, then on_finished last. Python's sys.stdout/sys.stderr
// write straight to the listener; before each Python write, pending C-level output is flushed first, so
// `print` and `printf` interleave as written. Output written while no cell runs (a background thread)
// goes to the most recently started request. Output arrives raw: carriage returns and size caps are the
// notebook model's job (rt_notebook's stream accumulation).
//
// Note [Cell execution rules] (IPython's)
// - A cell is compiled under the file name "<cell LABEL>" (LABEL = execute()'s cell_label, or the
//   execution count when empty) and its source is registered in `linecache`, so tracebacks show the
//   cell's lines: `File "<cell 3>", line 2, in <module>` followed by the line text. Kernel-internal frames
//   are removed from tracebacks. Re-running a label replaces its linecache entry.
// - When the last statement is an expression its value is the execute result: `_repr_mimebundle_()`,
//   then `_repr_png_`, `_repr_svg_`, `_repr_html_`, `_repr_markdown_`, `_repr_latex_`, `_repr_json_` add
//   their mime types, and text/plain is always `repr(value)`. A value of None shows nothing; a trailing
//   `;` suppresses the result. The value is also stored as `_` in the namespace (and `__`, `___`).
// - `display(obj, ...)` is a builtin that emits display data (same mime rules); `from IPython.display
//   import display` keeps working when IPython is installed.
// - matplotlib uses an Agg-based inline backend: after each cell every open figure is emitted as display
//   data (image/png, base64, plus text/plain "<Figure size 640x480 with 1 Axes>") and closed;
//   `plt.show()` emits the open figures at once and never blocks.
// - Every executed cell (ok or error) consumes an execution count; aborted cells (cancelled while queued,
//   or a kernel that failed to start) get none and receive only on_finished(status aborted / error).
// - `input()` raises a RuntimeError saying the studio kernel has no standard input.
// - `%matplotlib ...` lines are accepted and do nothing (figures are always inline); other IPython magics
//   and `!shell` lines are SyntaxErrors.
// - sys.path: the python_paths first, then '' (the working directory), then the usual entries.
// - Forked children (multiprocessing, DataLoader workers) write straight to fd 1/2, so with
//   capture_fd_output their output shows under the running cell too.
//
// Note [Kernel interrupt]
// interrupt() sends SIGINT to the interpreter thread (pthread_kill) while a cell runs: a busy Python loop
// gets KeyboardInterrupt at its next bytecode check, `time.sleep` wakes with EINTR and raises it, and a
// long engine op (GIL released in rustytorch's LongCall) sees rt::request_cancel() from the extension's
// own SIGINT handler and throws, which the module turns into KeyboardInterrupt (python/src/
// interrupt.cpp). Each of those stops within 1 s. A SIGINT that Python received but could not act on (it
// landed just before a blocking call such as the sleep itself) is sent again every 250 ms, at most 8
// times, until Python's handler has run (Note [Interrupt retry], python_runtime.cpp); one that Python or
// the engine took is never repeated, so `except KeyboardInterrupt:` cleanup runs undisturbed. The kernel
// puts Python's SIGINT handler back before each cell if the host (Qt, a test framework) replaced it.
// Cells queued at the time of the call finish as aborted;
// cells queued afterwards run normally. An interrupt that arrives after the cell ended is discarded, so
// it never hits a later cell. Code that catches KeyboardInterrupt and carries on keeps running: call
// interrupt() again or restart().
//
// Note [Kernel restart]
// restart() aborts queued cells, interrupts the running one, and then on the interpreter thread: removes
// every name from __main__ and rebuilds it (fresh builtins, `__name__ == "__main__"`), closes matplotlib
// figures, stops an active rustytorch profiler, clears the engine's cancel flag, turns grad mode on and
// anomaly mode off, and sets the execution count back to 1. CPython itself is NOT finalised (it cannot be
// re-initialised with extension modules loaded): already imported modules stay imported, so the next
// `import rustytorch` is instant, and module-level state of imported packages persists (as it would not
// after a Jupyter restart). State goes starting -> idle; cells queued after restart() run in the fresh
// namespace.
//
// Lifetime: construction returns at once (state `starting`); cells may be queued immediately. If CPython
// cannot start, state becomes `failed`, startup_error() says why, and every queued or later cell finishes
// with status error and an ExecutionError named "KernelStartupError". Only one PythonKernel may ever exist
// in a process (CPython can only be initialised once): constructing a second one, even after the first
// was destroyed, throws std::logic_error. The destructor aborts queued cells, interrupts the running one
// (and waits for it, re-sending the interrupt every second), runs Python's atexit functions, restores
// fd 1/2, and joins its threads; the interpreter is left initialised but idle (no Py_Finalize, so
// non-daemon user threads cannot hang shutdown).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rt::studio {

using RequestId = std::uint64_t;  // from execute(); never 0

enum class KernelState {
  starting,  // CPython initialising, or a restart in progress
  idle,      // nothing running, queue empty
  busy,      // a cell runs (or is about to)
  paused,    // reserved for the debugger: the interpreter thread waits inside a cell
  failed,    // CPython could not start (startup_error() says why); cells finish with an error
};
const char* to_string(KernelState state);  // "starting", "idle", "busy", "paused", "failed"

enum class Stream { out, err };
const char* nbformat_name(Stream stream);  // "stdout" / "stderr", nbformat's stream output names

// Mime type -> content, as in nbformat's "data": text types as text, image/png (and other binary
// types) base64 without line breaks, application/json (and */*+json) as serialised JSON text.
// text/plain is always present.
using MimeBundle = std::map<std::string, std::string>;

struct DisplayData {
  MimeBundle data;
  std::string metadata_json = "{}";  // nbformat "metadata" as a JSON object text, e.g. image sizes
};

struct ExecutionError {
  std::string ename;                   // "ZeroDivisionError"
  std::string evalue;                  // "division by zero"
  std::vector<std::string> traceback;  // one line per entry, no trailing newlines, plain text (no ANSI)
};

enum class ExecutionStatus { ok, error, aborted };
const char* to_string(ExecutionStatus status);  // "ok", "error", "aborted"

struct ExecutionSummary {
  RequestId id = 0;
  ExecutionStatus status = ExecutionStatus::ok;
  int execution_count = 0;  // 0 when the cell never ran (aborted, kernel failed)
  double seconds = 0.0;     // wall time of the cell itself (0 when it never ran)
};

// Receives a kernel's events. See Note [Kernel output order]. Callbacks run on kernel threads, one at a
// time; they must be quick, must not throw, and must never call into Python (take the GIL).
class KernelListener {
 public:
  virtual ~KernelListener() = default;
  virtual void on_started(RequestId /*id*/, int /*execution_count*/) {}
  virtual void on_stream(RequestId /*id*/, Stream /*stream*/, const std::string& /*text*/) {}
  virtual void on_display(RequestId /*id*/, const DisplayData& /*data*/) {}
  virtual void on_result(RequestId /*id*/, int /*execution_count*/, const DisplayData& /*data*/) {}
  virtual void on_error(RequestId /*id*/, const ExecutionError& /*error*/) {}
  virtual void on_finished(const ExecutionSummary& /*summary*/) {}
  virtual void on_state(KernelState /*state*/) {}
};

// ---- variables panel data ------------------------------------------------------------------------------
enum class VariableKind { tensor, module, array, scalar, text, collection, other };
const char* to_string(VariableKind kind);  // "tensor", "module", "array", "scalar", "text", "collection", "other"

struct VariableInfo {
  std::string name;
  VariableKind kind = VariableKind::other;
  std::string type_name;        // "Tensor", "Sequential", "ndarray", "int", "str", "list", "MyClass"
  std::vector<int64_t> shape;   // tensors and arrays; collections: {len}; empty otherwise
  std::string dtype;            // "float32", "int64" (tensors, arrays)
  std::string device;           // "cpu", "cuda:0" (tensors; arrays "cpu")
  int64_t bytes = -1;           // numel * element size (tensors, arrays); -1 when not known
  bool requires_grad = false;   // tensors
  int64_t parameter_count = -1; // modules: total parameter elements; -1 otherwise
  std::string value;            // scalars, str and bools: short repr (at most ~100 chars, "..." when cut)
};

// What __main__ holds, except names starting with '_', modules, functions, classes and the kernel's own
// builtins. Sorted by name. Computed from attributes only (no user __repr__ is called except for scalars
// and str), under the GIL on the inspector thread.
struct VariablesSnapshot {
  std::vector<VariableInfo> variables;
  int execution_count = 0;  // of the cell running or last run when the snapshot was taken
  bool cell_running = false;
  std::string error;        // non-empty when the snapshot could not be taken (then variables is empty)
};

// On-demand statistics of one tensor or numpy array, computed on a detached CPU copy via numpy (not
// through the engine's dispatch, so they neither show in profiles nor affect autograd).
struct TensorStats {
  std::string name;
  int64_t numel = 0;
  double min = 0, max = 0, mean = 0;  // over finite values; all 0 when there are none
  int64_t nan_count = 0;
  int64_t inf_count = 0;
  std::string error;  // "no variable named 'w'", "'w' is a list, not a tensor or array", ...
};

struct KernelOptions {
  // Directories put first on sys.path (each containing the `rustytorch` package). Empty: RT_PYTHONPATH's entries
  // or <executable dir>/../python, as for the rtorch CLI (app/common/python_package_dirs.h).
  std::vector<std::filesystem::path> python_paths;
  // Redirect fd 1 and fd 2 into pipes so output of C/C++ code reaches the listener. Process-wide: while a
  // cell runs, anything any thread writes to fd 1/2 is attributed to that cell.
  bool capture_fd_output = true;
  // Copy captured output to the original fd 1/2 as well (a terminal or log keeps seeing it).
  bool echo_output = true;
  // When non-empty, the process's working directory is set to this before the first cell (notebooks run
  // in their own directory, as in Jupyter).
  std::filesystem::path working_directory;
};

class PythonKernel {
 public:
  explicit PythonKernel(KernelOptions options = {});  // throws std::logic_error for a second instance
  ~PythonKernel();
  PythonKernel(const PythonKernel&) = delete;
  PythonKernel& operator=(const PythonKernel&) = delete;

  // Listeners get every event from the moment they are added. remove_listener returns once no callback
  // to `l` is in flight; do not call it from inside a callback.
  void add_listener(KernelListener* l);
  void remove_listener(KernelListener* l);

  // Queues a cell; returns at once. cell_label names the cell in tracebacks ("<cell LABEL>").
  RequestId execute(std::string code, std::string cell_label = {});
  void interrupt();  // See Note [Kernel interrupt]
  void restart();    // See Note [Kernel restart]

  // Sets the working directory before the next queued cell runs (queued like a cell, emits no events).
  void set_working_directory(std::filesystem::path dir);

  KernelState state() const;        // thread-safe
  std::string startup_error() const;  // empty unless state() == failed
  int next_execution_count() const;   // the count the next executed cell will get
  std::size_t queued_count() const;   // cells waiting (not counting the running one)

  // Blocks until the kernel is idle (queue empty, nothing running) or failed; false on timeout.
  bool wait_until_idle(std::chrono::milliseconds timeout) const;

  // Answered on the inspector thread (never the caller's), also while a cell runs. Callbacks must not
  // take the GIL. Requests made while CPython starts are answered once it has started.
  void request_variables(std::function<void(VariablesSnapshot)> done);
  void request_tensor_stats(std::string name, std::function<void(TensorStats)> done);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rt::studio
