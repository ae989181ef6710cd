#include "python_runtime.h"

#include "python_values.h"  // first: Python.h before the standard headers
#include "python_package_dirs.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "embedded_python_sources.h"
#include "rt/autograd/grad_mode.h"
#include "rt/op_observer.h"

namespace rt::studio {

namespace {

using pyvalue::Ref;

// The hooks of the live runtime. Read and written only with the GIL held, which is their lock.
PythonRuntime::Hooks* g_hooks = nullptr;

// Note [Interrupt retry]: a SIGINT that lands between Python's last signal check and a blocking call
// (time.sleep's clock_nanosleep, select, ...) trips Python's flag but the call sleeps on. The kernel's C
// handler counts deliveries, Python's handler (cell_runner._interrupt_handler) counts the ones it turned
// into KeyboardInterrupt; delivered > handled for a while means the interrupt is stuck and is sent again.
std::atomic<uint64_t> g_sigint_delivered{0};
std::atomic<uint64_t> g_sigint_handled{0};
void (*g_python_sigint)(int) = nullptr;

void kernel_sigint(int signum) {
  g_sigint_delivered.fetch_add(1, std::memory_order_relaxed);
  if (g_python_sigint) g_python_sigint(signum);
}

PyObject* native_sigint_handled(PyObject*, PyObject*) {
  g_sigint_handled.store(g_sigint_delivered.load(std::memory_order_relaxed), std::memory_order_relaxed);
  Py_RETURN_NONE;
}

void write_fallback(Stream stream, std::string_view text) {
  const int fd = stream == Stream::out ? 1 : 2;
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

PyObject* native_write(PyObject*, PyObject* args) {
  int stream = 0;
  PyObject* text = nullptr;
  if (!PyArg_ParseTuple(args, "iU:write", &stream, &text)) return nullptr;
  const std::string bytes = pyvalue::utf8(text);
  const Stream which = stream == 0 ? Stream::out : Stream::err;
  try {
    if (g_hooks && g_hooks->write)
      g_hooks->write(which, bytes);
    else
      write_fallback(which, bytes);
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "the studio kernel could not deliver output: %s", e.what());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* native_display(PyObject*, PyObject* args) {
  PyObject* data = nullptr;
  PyObject* metadata = nullptr;
  if (!PyArg_ParseTuple(args, "O!U:display", &PyDict_Type, &data, &metadata)) return nullptr;
  DisplayData shown = pyvalue::display_data(data, metadata);
  try {
    if (g_hooks && g_hooks->display) g_hooks->display(shown);
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "the studio kernel could not deliver display data: %s", e.what());
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef g_native_methods[] = {
    {"write", native_write, METH_VARARGS, "write(stream, text): stream 0 is stdout, 1 stderr"},
    {"display", native_display, METH_VARARGS, "display(data, metadata_json): display data for the running cell"},
    {"sigint_handled", native_sigint_handled, METH_NOARGS, "Python's SIGINT handler ran (Note [Interrupt retry])"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_native_module = {PyModuleDef_HEAD_INIT, "_rtstudio_native",
                               "The studio kernel's native side (app/studio/kernel/python_runtime.cpp).", -1,
                               g_native_methods, nullptr, nullptr, nullptr, nullptr};

PyObject* init_native() { return PyModule_Create(&g_native_module); }

std::string describe(const PyStatus& status) {
  std::string what = status.err_msg ? status.err_msg : "error";
  return status.func ? std::string(status.func) + ": " + what : what;
}

void check(const PyStatus& status, PyConfig& config) {
  if (!PyStatus_Exception(status)) return;
  PyConfig_Clear(&config);
  throw KernelStartupError("cannot start the embedded Python (" + describe(status) +
                           "); check that python3 (" RT_PYTHON_EXECUTABLE ") and its standard library are installed");
}

PyObject* load_module(const EmbeddedPythonModule& m) {
  Ref code(Py_CompileString(m.source, m.file_name, Py_file_input));
  if (!code) return nullptr;
  return PyImport_ExecCodeModuleEx(m.module, code.get(), m.file_name);
}

[[noreturn]] void throw_python(const std::string& what) {
  const ExecutionError e = pyvalue::take_exception(what.c_str());
  std::string text = "the studio kernel cannot start: " + what + " failed:";
  for (const auto& line : e.traceback) text += "\n  " + line;
  throw KernelStartupError(text);
}

}  // namespace

InterruptCounts sigint_counts() {
  return {g_sigint_delivered.load(std::memory_order_relaxed), g_sigint_handled.load(std::memory_order_relaxed)};
}

void PythonRuntime::prepare_process() {
  static std::once_flag prepared;
  // Subprocesses too; in-process pyplot gets the inline backend.
  std::call_once(prepared, [] { ::setenv("MPLBACKEND", "Agg", 1); });
}

PythonRuntime::PythonRuntime(const KernelOptions& options, Hooks hooks) {
  if (Py_IsInitialized()) throw KernelStartupError("CPython is already initialised in this process");
  prepare_process();  // a no-op when the kernel's constructor did it, as it must (Note [Environment races])
  PyPreConfig pre;
  PyPreConfig_InitPythonConfig(&pre);
  pre.coerce_c_locale = 0;  // Note [Environment races]: no setenv("LC_CTYPE") from this thread
  pre.coerce_c_locale_warn = 0;
  if (const PyStatus status = Py_PreInitialize(&pre); PyStatus_Exception(status))
    throw KernelStartupError(std::string("the studio kernel cannot start: CPython pre-initialisation failed: ") +
                             (status.err_msg ? status.err_msg : "unknown error"));
  if (PyImport_AppendInittab("_rtstudio_native", &init_native) != 0)
    throw KernelStartupError("cannot register the studio's native Python module");

  std::vector<std::filesystem::path> dirs = options.python_paths.empty() ? rt::app::python_package_dirs() : options.python_paths;
  std::string path;
  for (const auto& d : dirs) path.append(path.empty() ? "" : ":").append(d.string());
  if (const char* user = std::getenv("PYTHONPATH"); user && *user) path.append(path.empty() ? "" : ":").append(user);

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  config.install_signal_handlers = 1;  // SIGINT -> KeyboardInterrupt on this (Python's main) thread
  if (std::filesystem::exists(RT_PYTHON_EXECUTABLE))
    check(PyConfig_SetBytesString(&config, &config.executable, RT_PYTHON_EXECUTABLE), config);
  if (!path.empty()) check(PyConfig_SetBytesString(&config, &config.pythonpath_env, path.c_str()), config);
  char empty[] = "";
  char* argv[] = {empty};
  check(PyConfig_SetBytesArgv(&config, 1, argv), config);
  check(Py_InitializeFromConfig(&config), config);
  PyConfig_Clear(&config);

  Ref threading(PyImport_ImportModule("threading"));  // first, DESIGN §5
  if (!threading) throw_python("import threading");
  if (!Ref(load_module(kNamespaceInspectorModule))) throw_python("loading the namespace inspector");
  runner_ = load_module(kCellRunnerModule);
  if (!runner_) throw_python("loading the cell runner");
  Ref installed(PyObject_CallMethod(runner_, "install", "n", static_cast<Py_ssize_t>(dirs.size())));
  if (!installed) throw_python("installing the kernel's streams");
  // Python's C handler wrapped by kernel_sigint, re-installed before each cell (discard_pending_interrupt).
  sigaction(SIGINT, nullptr, &python_sigint_);
  if (!(python_sigint_.sa_flags & SA_SIGINFO) && python_sigint_.sa_handler != SIG_DFL &&
      python_sigint_.sa_handler != SIG_IGN) {
    g_python_sigint = python_sigint_.sa_handler;
    python_sigint_.sa_handler = &kernel_sigint;
    sigaction(SIGINT, &python_sigint_, nullptr);
  }
  g_hooks = new Hooks(std::move(hooks));
  // A forked child (multiprocessing, DataLoader workers) has no kernel threads: its prints go straight
  // to fd 1/2, which are the parent's pipes, so they still show under the running cell.
  static const int registered = pthread_atfork(nullptr, nullptr, [] { g_hooks = nullptr; });
  (void)registered;
}

PythonRuntime::~PythonRuntime() {
  delete g_hooks;
  g_hooks = nullptr;
  Py_XDECREF(runner_);
}

CellOutcome PythonRuntime::run_cell(const std::string& source, const std::string& filename) {
  CellOutcome out;
  Ref code(PyUnicode_DecodeUTF8(source.data(), static_cast<Py_ssize_t>(source.size()), "replace"));
  Ref name(PyUnicode_DecodeUTF8(filename.data(), static_cast<Py_ssize_t>(filename.size()), "replace"));
  Ref done(code && name ? PyObject_CallMethod(runner_, "run_cell", "OO", code.get(), name.get()) : nullptr);
  if (!done || !PyTuple_Check(done.get()) || PyTuple_GET_SIZE(done.get()) != 2) {
    out.error = PyErr_Occurred() ? pyvalue::take_exception("ran the cell")
                                 : ExecutionError{"KernelError", "the cell runner returned no outcome", {}};
    return out;
  }
  PyObject* result = PyTuple_GET_ITEM(done.get(), 0);
  PyObject* error = PyTuple_GET_ITEM(done.get(), 1);
  if (result != Py_None && PyTuple_Check(result) && PyTuple_GET_SIZE(result) == 2)
    out.result = pyvalue::display_data(PyTuple_GET_ITEM(result, 0), PyTuple_GET_ITEM(result, 1));
  if (error != Py_None) out.error = pyvalue::error(error);
  return out;
}

std::optional<ExecutionError> PythonRuntime::after_cell() {
  Ref error(PyObject_CallMethod(runner_, "after_cell", nullptr));
  if (!error) return pyvalue::take_exception("showed the cell's figures");
  if (error.get() == Py_None) return std::nullopt;
  return pyvalue::error(error.get());
}

void PythonRuntime::reset() {
  Ref done(PyObject_CallMethod(runner_, "reset", nullptr));
  if (!done) {
    const ExecutionError e = pyvalue::take_exception("reset the namespace");
    std::string text = "studio kernel: restart could not reset everything:\n";
    for (const auto& line : e.traceback) text += line + "\n";
    write_fallback(Stream::err, text);
  }
  rt::GradMode::set_enabled(true);  // grad mode is per thread: this is the thread cells run on
  rt::AnomalyMode::set_enabled(false);
  rt::clear_cancel();
}

void PythonRuntime::discard_pending_interrupt() {
  // Something else (a test framework, a GUI toolkit, a cell's own signal.signal) may have replaced the
  // process's SIGINT action: the kernel's interrupt needs Python's. Called between cells only, so the
  // extension's LongCall handler (python/src/interrupt.cpp) is never active here.
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  if (current.sa_handler != python_sigint_.sa_handler) sigaction(SIGINT, &python_sigint_, nullptr);
  sched_yield();  // a system call: a SIGINT already sent to this thread is handled on the way back
  if (PyErr_CheckSignals() != 0) PyErr_Clear();
  rt::clear_cancel();
}

std::optional<std::string> PythonRuntime::change_directory(const std::string& dir) {
  Ref os(PyImport_ImportModule("os"));
  Ref done(os ? PyObject_CallMethod(os.get(), "chdir", "s", dir.c_str()) : nullptr);
  if (done) return std::nullopt;
  const ExecutionError e = pyvalue::take_exception("changed directory");
  return "studio kernel: cannot change the working directory to " + dir + " (" + e.ename + ": " + e.evalue +
         "); cells run in " + std::filesystem::current_path().string() + "\n";
}

void PythonRuntime::shutdown() {
  Ref atexit(PyImport_ImportModule("atexit"));
  Ref done(atexit ? PyObject_CallMethod(atexit.get(), "_run_exitfuncs", nullptr) : nullptr);
  if (!done) PyErr_Clear();
  delete g_hooks;
  g_hooks = nullptr;
}

}  // namespace rt::studio
