#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "embedded_python.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "install_layout.h"

namespace rt::cli {
namespace {

std::string python_path_env() {
  std::string joined;
  for (const auto& dir : python_package_dirs()) joined.append(joined.empty() ? "" : ":").append(dir.string());
  if (const char* user = std::getenv("PYTHONPATH"); user && *user) joined.append(joined.empty() ? "" : ":").append(user);
  return joined;
}

std::string describe(const PyStatus& status) {
  return status.func ? fmt::format("{}: {}", status.func, status.err_msg ? status.err_msg : "error")
                     : std::string(status.err_msg ? status.err_msg : "error");
}

// Fills `config` like python3's own startup, with `argv` as sys.argv. Returns a failed status on error.
PyStatus configure(PyConfig& config, const std::vector<std::string>& argv) {
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  PyStatus status = PyStatus_Ok();
  if (std::filesystem::exists(RT_PYTHON_EXECUTABLE)) {
    status = PyConfig_SetBytesString(&config, &config.executable, RT_PYTHON_EXECUTABLE);
    if (PyStatus_Exception(status)) return status;
  }
  if (const std::string path = python_path_env(); !path.empty()) {
    status = PyConfig_SetBytesString(&config, &config.pythonpath_env, path.c_str());
    if (PyStatus_Exception(status)) return status;
  }
  std::vector<char*> raw;
  for (const auto& a : argv) raw.push_back(const_cast<char*>(a.c_str()));
  return PyConfig_SetBytesArgv(&config, static_cast<Py_ssize_t>(raw.size()), raw.data());
}

PyStatus initialize(PyConfig& config) {
  PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) return status;
  PyObject* threading = PyImport_ImportModule("threading");
  if (!threading) {
    PyErr_Print();
    return PyStatus_Error("cannot import threading");
  }
  Py_DECREF(threading);
  return PyStatus_Ok();
}

std::string str_of(PyObject* o) {
  if (!o) return {};
  PyObject* s = PyObject_Str(o);
  if (!s) {
    PyErr_Clear();
    return {};
  }
  const char* utf8 = PyUnicode_AsUTF8(s);
  std::string out = utf8 ? utf8 : "";
  Py_DECREF(s);
  return out;
}

std::string attribute(PyObject* o, const char* name) {
  PyObject* value = PyObject_GetAttrString(o, name);
  if (!value) {
    PyErr_Clear();
    return {};
  }
  std::string out = str_of(value);
  Py_DECREF(value);
  return out;
}

std::string sys_attribute(const char* name) {
  PyObject* value = PySys_GetObject(name);  // borrowed
  return str_of(value);
}

}  // namespace

int run_python_main(const PythonTarget& target) {
  std::vector<std::string> argv;
  switch (target.kind) {
    case PythonTarget::Kind::script: argv.push_back(target.target); break;
    case PythonTarget::Kind::command: argv.push_back("-c"); break;
    case PythonTarget::Kind::module: argv.push_back("-m"); break;
  }
  argv.insert(argv.end(), target.args.begin(), target.args.end());

  PyConfig config;
  PyStatus status = configure(config, argv);
  if (!PyStatus_Exception(status)) {
    switch (target.kind) {
      case PythonTarget::Kind::script:
        status = PyConfig_SetBytesString(&config, &config.run_filename, target.target.c_str());
        break;
      case PythonTarget::Kind::command:
        status = PyConfig_SetBytesString(&config, &config.run_command, (target.target + "\n").c_str());
        break;
      case PythonTarget::Kind::module:
        status = PyConfig_SetBytesString(&config, &config.run_module, target.target.c_str());
        break;
    }
  }
  if (!PyStatus_Exception(status)) {
    status = initialize(config);
  } else {
    PyConfig_Clear(&config);
  }
  if (PyStatus_Exception(status)) {
    if (PyStatus_IsExit(status)) return status.exitcode;
    fmt::print(stderr, "rtorch: cannot start the embedded Python ({})\n", describe(status));
    return 1;
  }
  return Py_RunMain();
}

EmbeddedInterpreter::EmbeddedInterpreter() {
  PyConfig config;
  PyStatus status = configure(config, {""});
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
  } else {
    status = initialize(config);
  }
  if (PyStatus_Exception(status))
    throw std::runtime_error(fmt::format("cannot start the embedded Python ({})", describe(status)));
}

EmbeddedInterpreter::~EmbeddedInterpreter() { Py_FinalizeEx(); }

std::string EmbeddedInterpreter::version() const {
  const std::string full = Py_GetVersion();
  return full.substr(0, full.find(' '));
}

std::string EmbeddedInterpreter::executable() const { return sys_attribute("executable"); }

std::vector<std::string> EmbeddedInterpreter::sys_path() const {
  std::vector<std::string> out;
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (!path || !PyList_Check(path)) return out;
  for (Py_ssize_t i = 0; i < PyList_Size(path); ++i) out.push_back(str_of(PyList_GetItem(path, i)));
  return out;
}

ModuleProbe EmbeddedInterpreter::probe(const std::string& module) const {
  ModuleProbe result;
  PyObject* mod = PyImport_ImportModule(module.c_str());
  if (!mod) {
    PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    const std::string name = type ? attribute(type, "__name__") : "ImportError";
    const std::string message = str_of(value);
    result.error = message.empty() ? name : fmt::format("{}: {}", name, message);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(trace);
    return result;
  }
  result.importable = true;
  result.version = attribute(mod, "__version__");
  result.location = attribute(mod, "__file__");
  Py_DECREF(mod);
  return result;
}

}  // namespace rt::cli
