// rustytorch.dtype (float32, int64, ...) and rustytorch.device.
#include <fmt/format.h>

#include "bind.h"

namespace rtpy {

PyObject* g_dtype_objects[8] = {};
PyTypeObject* g_dtype_type = nullptr;

namespace {
struct DType {
  rt::ScalarType type;
};

bool is_signed(rt::ScalarType t) { return t != rt::kBool && t != rt::kUInt8; }
}  // namespace

void bind_dtypes(py::module_& m) {
  py::class_<DType> dt(m, "dtype");
  dt.def_property_readonly("is_floating_point", [](const DType& d) { return rt::is_floating(d.type); })
      .def_property_readonly("is_signed", [](const DType& d) { return is_signed(d.type); })
      .def_property_readonly("is_complex", [](const DType&) { return false; })
      .def_property_readonly("itemsize", [](const DType& d) { return rt::element_size(d.type); })
      .def("__repr__", [](const DType& d) { return fmt::format("rustytorch.{}", rt::dtype_name(d.type)); })
      .def("__reduce__", [](const DType& d) { return std::string(rt::dtype_name(d.type)); });
  g_dtype_type = reinterpret_cast<PyTypeObject*>(dt.ptr());
  for (int i = 0; i < 8; ++i) {
    auto t = rt::ScalarType(i);
    py::object o = py::cast(DType{t});
    m.attr(std::string(rt::dtype_name(t)).c_str()) = o;
    g_dtype_objects[i] = o.release().ptr();
  }

  m.def("_set_size_type", [](py::object type) {
    Py_INCREF(type.ptr());
    g_size_type = type.ptr();
  });

  py::class_<rt::Device>(m, "device")
      .def(py::init([](py::object spec, std::optional<int> index) {
             rt::Device d = to_device(spec);
             if (index) {
               if (d.is_cpu() && *index != 0)
                 throw py::value_error(fmt::format("device: the cpu device has only index 0, got {}", *index));
               d.index = *index;
             }
             return d;
           }),
           py::arg("type"), py::arg("index") = py::none())
      .def_property_readonly("type", [](const rt::Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
      .def_property_readonly("index", [](const rt::Device& d) -> py::object {
        if (d.is_cpu()) return py::none();
        return py::int_(d.index);
      })
      .def("__eq__", [](const rt::Device& a, py::handle b) {
        return py::isinstance<rt::Device>(b) && a == b.cast<rt::Device>();  // other types: not equal, as PyTorch
      })
      .def("__hash__", [](const rt::Device& d) { return int(d.type) * 1000 + d.index; })
      .def("__str__", [](const rt::Device& d) { return d.str(); })
      .def("__repr__", [](const rt::Device& d) {
        return d.is_cpu() ? std::string("device(type='cpu')") : fmt::format("device(type='cuda', index={})", d.index);
      });
}

}  // namespace rtpy

namespace pybind11::detail {
bool type_caster<rt::ScalarType>::load(handle src, bool) {
  if (Py_TYPE(src.ptr()) == rtpy::g_dtype_type) {
    value = src.cast<rtpy::DType&>().type;
    return true;
  }
  // Python's own types, as torch accepts them: float -> float64, int -> int64, bool -> bool.
  if (src.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) { value = rt::kFloat64; return true; }
  if (src.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) { value = rt::kInt64; return true; }
  if (src.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) { value = rt::kBool; return true; }
  return false;
}
}  // namespace pybind11::detail
