// Engine exceptions -> the Python exceptions PyTorch raises in the same situation, message kept.
// torch raises RuntimeError for most of what our engine calls ValueError or IndexError (bad
// sizes, gather out of bounds...), and IndexError/ValueError for some (indexing, losses). So
// those two arrive as classes deriving from both, and `except RuntimeError:` and
// `except IndexError:` in ported code both catch them.
#include <regex>

#include "bind.h"

namespace rtpy {

namespace {
PyObject* g_index_error = nullptr;
PyObject* g_value_error = nullptr;
PyObject* g_zero_division_error = nullptr;

PyObject* both(py::module_& m, const char* name, PyObject* base) {
  py::tuple bases = py::make_tuple(py::handle(base), py::handle(PyExc_RuntimeError));
  PyObject* type = PyErr_NewException((std::string("rustytorch.") + name).c_str(), bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::handle(type);
  return type;
}

// The engine's hints are written for C++ callers; say them in Python.
std::string in_python_terms(const char* message) {
  static const std::pair<std::regex, const char*> rules[] = {
      {std::regex(R"(rt::kFloat(16|32|64))"), "rt.float$1"},
      {std::regex(R"(rt::kBFloat16)"), "rt.bfloat16"},
      {std::regex(R"(rt::kInt(32|64))"), "rt.int$1"},
      {std::regex(R"(rt::kUInt8)"), "rt.uint8"},
      {std::regex(R"(rt::kBool)"), "rt.bool"},
      {std::regex(R"(rt::NoGradGuard\b)"), "rt.no_grad()"},
      {std::regex(R"(rt::(nn|optim|autograd|data|io)::)"), "rt.$1."},
      {std::regex(R"(rt::)"), "rt."},
      {std::regex(R"(\bNoGradGuard\b)"), "rt.no_grad()"},
      {std::regex(R"(=true\b)"), "=True"},
      {std::regex(R"(=false\b)"), "=False"},
  };
  std::string s(message);
  for (const auto& [pattern, replacement] : rules) s = std::regex_replace(s, pattern, replacement);
  return s;
}
}  // namespace

void bind_errors(py::module_& m) {
  g_index_error = both(m, "EngineIndexError", PyExc_IndexError);
  g_value_error = both(m, "EngineValueError", PyExc_ValueError);
  // torch raises RuntimeError("ZeroDivisionError") for integer division by zero; Python code catches
  // ZeroDivisionError.
  g_zero_division_error = both(m, "EngineZeroDivisionError", PyExc_ZeroDivisionError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const rt::InterruptedError& e) {
      rt::clear_cancel();
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const rt::IndexError& e) {
      PyErr_SetString(g_index_error, in_python_terms(e.what()).c_str());
    } catch (const rt::ValueError& e) {
      PyErr_SetString(g_value_error, in_python_terms(e.what()).c_str());
    } catch (const rt::ZeroDivisionError& e) {
      PyErr_SetString(g_zero_division_error, in_python_terms(e.what()).c_str());
    } catch (const rt::NotImplementedError& e) {
      PyErr_SetString(PyExc_NotImplementedError, in_python_terms(e.what()).c_str());
    } catch (const rt::Error& e) {  // ShapeError, DTypeError, DeviceError, AutogradError: RuntimeError in torch
      PyErr_SetString(PyExc_RuntimeError, in_python_terms(e.what()).c_str());
    }
  });
}

}  // namespace rtpy
