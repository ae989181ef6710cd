// app/studio/kernel/python_values.h — Python objects to the kernel's C++ values. Internal to rt_kernel;
// every function needs the GIL and never leaves a Python exception set.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>

#include "python_kernel.h"

namespace rt::studio::pyvalue {

std::string utf8(PyObject* text);  // a str as UTF-8 (unencodable characters replaced); "" for non-str
std::string str(PyObject* object);  // str(object) as UTF-8; "" when str() fails
// {"mime": "text", ...} (non-str values go through str()) and a metadata JSON text.
DisplayData display_data(PyObject* data, PyObject* metadata_json);
// cell_runner's (ename, evalue, traceback_lines) tuple.
ExecutionError error(PyObject* triple);
// The pending Python exception (cleared), formatted like a cell error; `context` names what failed.
ExecutionError take_exception(const char* context);

// A strong reference released at scope exit.
class Ref {
 public:
  explicit Ref(PyObject* o = nullptr) : o_(o) {}
  ~Ref() { Py_XDECREF(o_); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* get() const { return o_; }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_;
};

}  // namespace rt::studio::pyvalue
