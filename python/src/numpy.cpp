// numpy interop: Tensor.numpy() and rt.from_numpy share memory; both keep the owner alive.
#include <pybind11/numpy.h>

#include <fmt/format.h>

#include "bind.h"

namespace rtpy {

namespace {
py::dtype numpy_dtype(const rt::Tensor& t) {
  switch (t.dtype()) {
    case rt::kBool: return py::dtype("bool");
    case rt::kUInt8: return py::dtype("uint8");
    case rt::kInt32: return py::dtype("int32");
    case rt::kInt64: return py::dtype("int64");
    case rt::kFloat16: return py::dtype("float16");
    case rt::kFloat32: return py::dtype("float32");
    case rt::kFloat64: return py::dtype("float64");
    case rt::kBFloat16: break;
  }
  throw py::type_error("Got unsupported ScalarType BFloat16: numpy has no bfloat16; convert first with "
                       "tensor.float().numpy()");
}

std::optional<rt::ScalarType> engine_dtype(const py::dtype& d) {
  const char kind = d.kind();
  // The attribute, not py::dtype::itemsize(): pybind11 before 2.12 reads NumPy 1's struct layout, 0 under NumPy 2.
  const auto size = d.attr("itemsize").cast<py::ssize_t>();
  if (kind == 'b' && size == 1) return rt::kBool;
  if (kind == 'u' && size == 1) return rt::kUInt8;
  if (kind == 'i' && size == 4) return rt::kInt32;
  if (kind == 'i' && size == 8) return rt::kInt64;
  if (kind == 'f' && size == 2) return rt::kFloat16;
  if (kind == 'f' && size == 4) return rt::kFloat32;
  if (kind == 'f' && size == 8) return rt::kFloat64;
  return std::nullopt;
}

py::array to_numpy(const rt::Tensor& t, bool force) {
  if (!t.device().is_cpu())
    throw py::type_error(fmt::format("can't convert {} device type tensor to numpy. Use Tensor.cpu() to copy the "
                                     "tensor to host memory first.", t.device().str()));
  if (t.requires_grad() && !force)
    throw py::value_error("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
  py::dtype dt = numpy_dtype(t);
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end()), strides;
  for (int64_t s : t.strides()) strides.push_back(py::ssize_t(s * int64_t(t.element_size())));
  auto* keep = new rt::Storage(t.storage());
  py::capsule owner(keep, [](void* p) { delete static_cast<rt::Storage*>(p); });
  return py::array(dt, shape, strides, t.numel() == 0 ? nullptr : t.raw_data(), owner);
}
}  // namespace

rt::Tensor from_numpy_array(py::handle obj) {
  if (!py::isinstance<py::array>(obj))
    throw py::type_error(fmt::format("expected np.ndarray (got {})", Py_TYPE(obj.ptr())->tp_name));
  py::array arr = py::reinterpret_borrow<py::array>(obj);
  auto dtype = engine_dtype(arr.dtype());
  if (!dtype)
    throw py::type_error(fmt::format("can't convert np.ndarray of type numpy.{}. The only supported types are: "
                                     "float64, float32, float16, int64, int32, uint8, and bool.",
                                     py::str(arr.dtype()).cast<std::string>()));
  if (arr.dtype().attr("byteorder").cast<std::string>() == ">")
    throw py::value_error("given numpy array has byte order different from the native byte order. Conversion "
                          "between byte orders is currently not supported.");
  const int64_t item = arr.dtype().attr("itemsize").cast<int64_t>();
  rt::Shape sizes, strides;
  int64_t extent = 1;
  bool empty = false;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) {
    const int64_t st = int64_t(arr.strides(d));
    if (st < 0)
      throw py::value_error("At least one stride in the given numpy array is negative, and tensors with negative "
                            "strides are not currently supported. (You can probably work around this by making a "
                            "copy of your array with array.copy().)");
    if (st % item != 0)
      throw py::value_error("given numpy array strides not a multiple of the element byte size. Copy the numpy "
                            "array to reallocate the memory.");
    sizes.push_back(int64_t(arr.shape(d)));
    strides.push_back(st / item);
    if (arr.shape(d) == 0) empty = true;
    else extent += (int64_t(arr.shape(d)) - 1) * (st / item);
  }
  const size_t nbytes = empty ? 0 : size_t(extent * item);
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);
  rt::Storage storage = rt::Storage::external(const_cast<void*>(arr.data()), nbytes, rt::Device::cpu(), [owner](void*) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(owner);
  });
  auto impl = std::make_shared<rt::TensorImpl>();
  impl->storage = std::move(storage);
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->dtype = *dtype;
  return rt::Tensor(std::move(impl));
}

void bind_numpy(py::module_& m) {
  m.def("from_numpy", [](py::handle a) { return from_numpy_array(a); }, py::arg("ndarray"));
  tensor_class(m).def(
      "numpy", [](const rt::Tensor& t, bool force) { return to_numpy(force ? t.detach() : t, force); }, py::kw_only(),
      py::arg("force") = false);
}

}  // namespace rtpy
