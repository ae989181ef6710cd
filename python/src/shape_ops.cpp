// Views and shape ops: view/reshape/permute/transpose/squeeze/expand..., cat/stack/split,
// gather/scatter_add/index_select, repeat, tril/triu, dtype conversions.
#include <fmt/format.h>

#include <algorithm>

#include "bind.h"

namespace rtpy {

namespace {
// view(2, 3) and view((2, 3)) alike.
rt::Shape varargs_shape(const py::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()) && !is_tensor(args[0])) return to_shape(args[0], what);
  return to_shape(args, what);
}

rt::TensorList tensor_list(py::handle seq, const char* op) {
  if (is_tensor(seq) || !PySequence_Check(seq.ptr()))
    throw py::type_error(fmt::format("{}: expected a sequence of Tensors, got {}", op, Py_TYPE(seq.ptr())->tp_name));
  rt::TensorList out;
  for (py::handle h : py::reinterpret_borrow<py::sequence>(seq)) {
    if (!is_tensor(h))
      throw py::type_error(fmt::format("{}: expected a sequence of Tensors, but an element is {}", op,
                                       Py_TYPE(h.ptr())->tp_name));
    out.push_back(unwrap(h));
  }
  return out;
}

py::tuple to_tuple(const rt::TensorList& ts) {
  py::tuple t(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) t[i] = wrap(ts[i]);
  return t;
}

rt::Tensor squeeze_dims(const rt::Tensor& x, py::handle dim) {
  if (dim.is_none()) return rt::squeeze(x);
  rt::Shape dims = to_dims(dim);
  for (int64_t& d : dims) d = rt::wrap_dim(d, std::max<int64_t>(x.dim(), 1), "squeeze");
  std::sort(dims.begin(), dims.end());
  rt::Tensor r = x;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) r = rt::squeeze(r, *it);
  return r;
}

rt::Tensor movedim(const rt::Tensor& x, py::handle source, py::handle destination) {
  rt::Shape src = to_dims(source), dst = to_dims(destination);
  if (src.size() != dst.size())
    throw py::value_error(fmt::format("movedim: Invalid source or destination dims: source ({} dims) should contain "
                                      "the same number of dims as destination ({} dims)", src.size(), dst.size()));
  const int64_t n = x.dim();
  rt::Shape order(size_t(n), -1);
  std::vector<bool> used(size_t(n), false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = rt::wrap_dim(src[i], n, "movedim"), d = rt::wrap_dim(dst[i], n, "movedim");
    order[size_t(d)] = s;
    used[size_t(s)] = true;
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o != -1) continue;
    while (used[size_t(next)]) ++next;
    o = next++;
  }
  return rt::permute(x, order);
}
}  // namespace

void bind_shape_ops(py::module_& m) {
  TensorClass cls = tensor_class(m);
  cls.def("view", [](const rt::Tensor& t, py::args shape) {
    if (shape.size() == 1 && py::isinstance(shape[0], py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(g_dtype_type))))
      throw rt::NotImplementedError("view(dtype) (reinterpreting bytes) is not supported; use .to(dtype) to convert");
    return rt::view(t, varargs_shape(shape, "view"));
  });
  cls.def("reshape", [](const rt::Tensor& t, py::args shape) { return rt::reshape(t, varargs_shape(shape, "reshape")); });
  m.def("reshape", [](const rt::Tensor& t, py::handle shape) { return rt::reshape(t, to_shape(shape, "shape")); },
        py::arg("input"), py::arg("shape"));
  cls.def("view_as", [](const rt::Tensor& t, const rt::Tensor& o) { return rt::view(t, o.sizes()); }, py::arg("other"));
  cls.def("reshape_as", [](const rt::Tensor& t, const rt::Tensor& o) { return rt::reshape(t, o.sizes()); },
          py::arg("other"));
  cls.def("permute", [](const rt::Tensor& t, py::args dims) { return rt::permute(t, varargs_shape(dims, "dims")); });
  m.def("permute", [](const rt::Tensor& t, py::handle dims) { return rt::permute(t, to_shape(dims, "dims")); },
        py::arg("input"), py::arg("dims"));
  for (const char* name : {"transpose", "swapaxes", "swapdims"})
    def_both(m, cls, name, [](const rt::Tensor& t, int64_t a, int64_t b) { return rt::transpose(t, a, b); },
             py::arg("dim0"), py::arg("dim1"));
  def_both(m, cls, "t", [](const rt::Tensor& t) { return t.t(); });
  cls.def_property_readonly("T", [](const rt::Tensor& t) {
    rt::Shape order;
    for (int64_t d = t.dim() - 1; d >= 0; --d) order.push_back(d);
    return rt::permute(t, order);
  });
  cls.def_property_readonly("mT", [](const rt::Tensor& t) { return rt::transpose(t, -2, -1); });
  def_both(m, cls, "squeeze", [](const rt::Tensor& t, py::handle dim) { return squeeze_dims(t, dim); },
           py::arg("dim") = py::none());
  def_both(m, cls, "unsqueeze", [](const rt::Tensor& t, int64_t d) { return rt::unsqueeze(t, d); }, py::arg("dim"));
  cls.def("expand", [](const rt::Tensor& t, py::args size) { return rt::expand(t, varargs_shape(size, "size")); });
  cls.def("expand_as", [](const rt::Tensor& t, const rt::Tensor& o) { return rt::expand(t, o.sizes()); },
          py::arg("other"));
  def_both(m, cls, "broadcast_to", [](const rt::Tensor& t, py::handle s) { return rt::expand(t, to_shape(s, "size")); },
           py::arg("size"));
  def_both(m, cls, "narrow",
           [](const rt::Tensor& t, int64_t d, int64_t start, int64_t length) { return rt::narrow(t, d, start, length); },
           py::arg("dim"), py::arg("start"), py::arg("length"));
  def_both(m, cls, "select", [](const rt::Tensor& t, int64_t d, int64_t i) { return rt::select(t, d, i); },
           py::arg("dim"), py::arg("index"));
  def_both(m, cls, "flatten", [](const rt::Tensor& t, int64_t s, int64_t e) { return rt::flatten(t, s, e); },
           py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  def_both(m, cls, "unflatten",
           [](const rt::Tensor& t, int64_t d, py::handle sizes) { return t.unflatten(d, to_shape(sizes, "sizes")); },
           py::arg("dim"), py::arg("sizes"));
  def_both(m, cls, "movedim", &movedim, py::arg("source"), py::arg("destination"));
  def_both(m, cls, "moveaxis", &movedim, py::arg("source"), py::arg("destination"));
  cls.def("contiguous", [](py::handle self) -> py::object {
    rt::Tensor t = unwrap(self);
    if (t.is_contiguous()) return same(self);
    return wrap(run_sized(t.numel(), [&] { return rt::contiguous(t); }));
  });
  def_both(m, cls, "clone", [](const rt::Tensor& t) { return run_sized(t.numel(), [&] { return rt::clone(t); }); });
  m.def("detach", [](const rt::Tensor& t) { return t.detach(); }, py::arg("input"));
  cls.def("_to_dtype", [](py::handle self, rt::ScalarType dtype, bool copy) -> py::object {
    rt::Tensor t = unwrap(self);
    if (t.dtype() == dtype && !copy) return same(self);
    if (t.dtype() == dtype) return wrap(rt::clone(t));
    return wrap(run_sized(t.numel(), [&] { return rt::to_dtype(t, dtype); }));
  }, py::arg("dtype"), py::arg("copy") = false);
  const std::pair<const char*, rt::ScalarType> conversions[] = {
      {"float", rt::kFloat32}, {"double", rt::kFloat64}, {"half", rt::kFloat16}, {"bfloat16", rt::kBFloat16},
      {"long", rt::kInt64},    {"int", rt::kInt32},      {"bool", rt::kBool},   {"byte", rt::kUInt8}};
  for (auto [name, type] : conversions) {
    rt::ScalarType dt = type;
    cls.def(name, [dt](py::handle self) -> py::object {
      rt::Tensor t = unwrap(self);
      if (t.dtype() == dt) return same(self);
      return wrap(rt::to_dtype(t, dt));
    });
  }
  cls.def("type_as", [](py::handle self, const rt::Tensor& o) -> py::object {
    rt::Tensor t = unwrap(self);
    if (t.dtype() == o.dtype()) return same(self);
    return wrap(rt::to_dtype(t, o.dtype()));
  }, py::arg("other"));

  for (const char* name : {"cat", "concat", "concatenate"})
    m.def(name, [](py::handle ts, int64_t dim) { return rt::cat(tensor_list(ts, "cat"), dim); }, py::arg("tensors"),
          py::arg("dim") = 0);
  m.def("stack", [](py::handle ts, int64_t dim) { return rt::stack(tensor_list(ts, "stack"), dim); },
        py::arg("tensors"), py::arg("dim") = 0);
  m.def("hstack", [](py::handle ts) {
    rt::TensorList l = tensor_list(ts, "hstack");
    return rt::cat(l, !l.empty() && l[0].dim() == 1 ? 0 : 1);
  }, py::arg("tensors"));
  m.def("vstack", [](py::handle ts) {
    rt::TensorList l = tensor_list(ts, "vstack");
    for (auto& t : l) if (t.dim() < 2) t = rt::reshape(t, {1, -1});
    return rt::cat(l, 0);
  }, py::arg("tensors"));
  def_both(m, cls, "split",
           [](const rt::Tensor& t, py::handle size, int64_t dim) {
             if (PyLong_Check(size.ptr())) return to_tuple(rt::split(t, size.cast<int64_t>(), dim));
             return to_tuple(rt::split(t, to_shape(size, "split_size_or_sections"), dim));
           },
           py::arg("split_size_or_sections"), py::arg("dim") = 0);
  def_both(m, cls, "chunk", [](const rt::Tensor& t, int64_t c, int64_t d) { return to_tuple(rt::chunk(t, c, d)); },
           py::arg("chunks"), py::arg("dim") = 0);
  def_both(m, cls, "unbind",
           [](const rt::Tensor& t, int64_t d) {
             const int64_t n = t.size(d);
             rt::TensorList out;
             for (int64_t i = 0; i < n; ++i) out.push_back(rt::select(t, d, i));
             return to_tuple(out);
           },
           py::arg("dim") = 0);
  def_both(m, cls, "gather", [](const rt::Tensor& t, int64_t d, const rt::Tensor& i) { return rt::gather(t, d, i); },
           py::arg("dim"), py::arg("index"));
  def_both(m, cls, "scatter_add",
           [](const rt::Tensor& t, int64_t d, const rt::Tensor& i, const rt::Tensor& s) {
             return rt::scatter_add(t, d, i, s);
           },
           py::arg("dim"), py::arg("index"), py::arg("src"));
  cls.def(
      "scatter_add_",
      [](py::handle self, int64_t d, const rt::Tensor& i, const rt::Tensor& s) {
        rt::Tensor t = unwrap(self);
        rt::Tensor r = rt::scatter_add(t.detach(), d, i, s.detach());
        if (rt::autograd::any_requires_grad(t, s))
          throw rt::NotImplementedError("scatter_add_ with autograd is not supported; use the out-of-place "
                                        "scatter_add");
        rt::copy_(t, r);
        return same(self);
      },
      py::arg("dim"), py::arg("index"), py::arg("src"));
  def_both(m, cls, "index_select",
           [](const rt::Tensor& t, int64_t d, const rt::Tensor& i) { return rt::index_select(t, d, i); },
           py::arg("dim"), py::arg("index"));
  cls.def("repeat", [](const rt::Tensor& t, py::args r) { return rt::repeat(t, varargs_shape(r, "repeats")); });
  def_both(m, cls, "tril", [](const rt::Tensor& t, int64_t k) { return rt::tril(t, k); }, py::arg("diagonal") = 0);
  def_both(m, cls, "triu", [](const rt::Tensor& t, int64_t k) { return rt::triu(t, k); }, py::arg("diagonal") = 0);
  m.def("broadcast_shapes", [](py::args shapes) {
    rt::Shape s;
    for (py::handle h : shapes) s = rt::broadcast_shapes(s, to_shape(h, "shape"), "broadcast_shapes");
    return make_size(s);
  });
}

}  // namespace rtpy
