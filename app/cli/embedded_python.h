// app/cli/embedded_python.h — CPython embedded in rtorch, configured like the configured python3
// (RT_PYTHON_EXECUTABLE: same sys.prefix, site-packages, numpy, torch) with the rustytorch package
// directories (install_layout.h) put on sys.path ahead of PYTHONPATH's entries.
//
//   int code = run_python_main({PythonTarget::Kind::script, "train.py", {"--epochs", "3"}});
//   // behaves like `python3 train.py --epochs 3`: sys.argv, sys.path[0], tracebacks, exit status
//
//   EmbeddedInterpreter py;
//   ModuleProbe numpy = py.probe("numpy");   // numpy.importable, numpy.version, numpy.error
//
// Contracts: one interpreter per process, used from the main thread. run_python_main initialises,
// runs and finalises it (CPython's Py_RunMain) and returns the exit code python3 would: 0, the
// sys.exit() code, 1 after an uncaught exception (traceback printed on stderr); an uncaught
// KeyboardInterrupt ends the process by SIGINT as python3 does. `threading` is imported before the
// target runs. Failing to start the interpreter prints the reason and returns 1.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace rt::cli {

struct PythonTarget {
  enum class Kind { script, command, module };
  Kind kind = Kind::script;
  std::string target;             // script path, code, or module name
  std::vector<std::string> args;  // sys.argv[1:]
};

int run_python_main(const PythonTarget& target);

struct ModuleProbe {
  bool importable = false;
  std::string version;   // __version__, empty when the module has none
  std::string location;  // __file__
  std::string error;     // "ModuleNotFoundError: No module named 'torch'" when not importable
};

class EmbeddedInterpreter {
 public:
  EmbeddedInterpreter();  // throws std::runtime_error when CPython cannot start
  ~EmbeddedInterpreter();
  EmbeddedInterpreter(const EmbeddedInterpreter&) = delete;
  EmbeddedInterpreter& operator=(const EmbeddedInterpreter&) = delete;

  std::string version() const;     // "3.11.2"
  std::string executable() const;  // sys.executable
  std::vector<std::string> sys_path() const;
  ModuleProbe probe(const std::string& module) const;
};

}  // namespace rt::cli
