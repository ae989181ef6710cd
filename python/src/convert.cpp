// Python values -> engine arguments (numbers, shapes, dims, devices) and engine values -> Python.
#include <fmt/format.h>

#include "bind.h"

namespace rtpy {

PyTypeObject* g_tensor_type = nullptr;
PyObject* g_size_type = reinterpret_cast<PyObject*>(&PyTuple_Type);

py::object wrap(const rt::Tensor& t) {
  if (!t.defined()) return py::none();
  // What pybind11's holder caster does, without looking the type up by its name every time: the
  // existing Python object for this TensorImpl if there is one, else a new one holding a copy of
  // the engine's shared_ptr.
  static const py::detail::type_info* tensor_info = py::detail::get_type_info(typeid(rt::TensorImpl));
  return py::reinterpret_steal<py::object>(py::detail::type_caster_generic::cast(
      t.impl_ptr().get(), py::return_value_policy::take_ownership, py::handle(), tensor_info, nullptr, nullptr,
      &t.impl_ptr()));
}

std::optional<rt::Scalar> to_scalar(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return rt::Scalar(o == Py_True);
  if (PyFloat_Check(o)) return rt::Scalar(PyFloat_AS_DOUBLE(o));
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw py::value_error(fmt::format("the integer {} does not fit in int64", py::str(h).cast<std::string>()));
    return rt::Scalar(int64_t(v));
  }
  if (is_tensor(h)) {
    rt::Tensor t = unwrap(h);
    if (t.numel() != 1) return std::nullopt;
    return t.item();
  }
  // numpy scalars (numpy.float32(1), numpy.bool_(True), ...): go through their Python value.
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !PyObject_HasAttrString(o, "__len__")) {
    py::object v = h.attr("item")();
    if (PyBool_Check(v.ptr()) || PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr())) return to_scalar(v);
  }
  return std::nullopt;
}

py::object scalar_to_py(const rt::Scalar& s) {
  if (s.is_bool()) return py::bool_(s.to_int() != 0);
  if (s.is_integral()) return py::int_(s.to_int());
  return py::float_(s.to_double());
}

rt::Tensor tensor_or_number(py::handle h, const char* op) {
  if (is_tensor(h)) return unwrap(h);
  if (auto s = to_scalar(h)) return rt::scalar_to_tensor(*s);
  throw py::type_error(fmt::format("{}: expected a Tensor or a number, got {}", op, Py_TYPE(h.ptr())->tp_name));
}

static int64_t to_int(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) return h.cast<int64_t>();
  if (PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr()) && !is_tensor(h)) return py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr())).cast<int64_t>();
  if (is_tensor(h)) {
    rt::Tensor t = unwrap(h);
    if (t.numel() == 1 && !t.is_floating_point() && t.dtype() != rt::kBool) return t.item<int64_t>();
  }
  throw py::type_error(fmt::format("{} must be int, not {}", what, Py_TYPE(h.ptr())->tp_name));
}

rt::Shape to_shape(py::handle h, const char* what) {
  if (PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !is_tensor(h))) return {to_int(h, what)};
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || is_tensor(h))
    throw py::type_error(fmt::format("{} must be a tuple of ints, got {}", what, Py_TYPE(h.ptr())->tp_name));
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  rt::Shape s;
  s.reserve(seq.size());
  for (py::handle e : seq) s.push_back(to_int(e, what));
  return s;
}

rt::Shape to_dims(py::handle h) {
  if (h.is_none()) return {};
  return to_shape(h, "dim");
}

rt::Device to_device(py::handle h) {
  if (h.is_none()) return rt::Device::cpu();
  if (py::isinstance<rt::Device>(h)) return h.cast<rt::Device>();
  if (PyLong_Check(h.ptr())) return rt::Device::cuda(h.cast<int>());
  if (PyUnicode_Check(h.ptr())) {
    std::string s = h.cast<std::string>();
    if (s == "cpu") return rt::Device::cpu();
    if (s == "cuda") return rt::Device::cuda(0);
    if (s.rfind("cuda:", 0) == 0) {
      try {
        return rt::Device::cuda(std::stoi(s.substr(5)));
      } catch (const std::exception&) {
      }
    }
    throw py::value_error(fmt::format("invalid device string '{}': expected 'cpu', 'cuda' or 'cuda:N'", s));
  }
  throw py::type_error(fmt::format("device must be a rustytorch.device or a string like 'cpu', got {}",
                                   Py_TYPE(h.ptr())->tp_name));
}

py::object make_size(const rt::Shape& s) {
  py::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
  if (g_size_type == reinterpret_cast<PyObject*>(&PyTuple_Type)) return t;
  return py::reinterpret_borrow<py::object>(g_size_type)(t);
}

}  // namespace rtpy
