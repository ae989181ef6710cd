// rustytorch.Tensor: construction, subclassing (Parameter), metadata and autograd attributes.
// Ops are attached to the same class by the other bind_* files and by rustytorch/_tensor.py.
#include <fmt/format.h>

#include "bind.h"
#include "rt/autograd/node.h"

namespace rtpy {

namespace {
// A new TensorImpl aliasing t's storage and geometry, with no autograd history (torch's
// `_make_subclass` / `Tensor(t)` alias).
std::shared_ptr<rt::TensorImpl> alias_of(const rt::Tensor& t) {
  auto impl = std::make_shared<rt::TensorImpl>();
  impl->storage = t.storage();
  impl->sizes = t.sizes();
  impl->strides = t.strides();
  impl->offset = t.storage_offset();
  impl->dtype = t.dtype();
  impl->is_view = t.impl().is_view;
  return impl;
}

void construct(py::detail::value_and_holder& v_h, std::shared_ptr<rt::TensorImpl> impl) {
  py::detail::initimpl::construct<TensorClass>(v_h, std::move(impl), false);
}

py::object to_list(const rt::Tensor& c, int64_t dim, int64_t offset) {
  const int64_t n = c.size(dim), stride = c.stride(dim);
  py::list out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t off = offset + i * stride;
    if (dim + 1 == c.dim()) {
      py::object v;
      rt::visit_dtype(c.dtype(), [&]<typename T>() {
        const T x = static_cast<const T*>(c.raw_data())[off - c.storage_offset()];
        if constexpr (std::is_same_v<T, bool>) v = py::bool_(x);
        else if constexpr (std::is_integral_v<T>) v = py::int_(int64_t(x));
        else v = py::float_(double(rt::compute_t<T>(x)));
      });
      out[size_t(i)] = std::move(v);
    } else {
      out[size_t(i)] = to_list(c, dim + 1, off);
    }
  }
  return out;
}

rt::Tensor checked_item_tensor(const rt::Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw py::value_error(fmt::format("only one element tensors can be converted to Python scalars ({} of a "
                                      "tensor with {} elements)", what, t.numel()));
  return t;
}
}  // namespace

void bind_tensor_class(py::module_& m) {
  TensorClass cls(m, "Tensor", py::dynamic_attr());
  g_tensor_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

  // Tensor(), Tensor(2, 3) (uninitialised float32), Tensor([1, 2]) (float32 copy), Tensor(t) (alias).
  // A no-op when the object was already made by _make_subclass (a subclass's __new__).
  cls.def(
      "__init__",
      [](py::detail::value_and_holder& v_h, py::args args) {
        if (v_h.holder_constructed()) return;
        rt::Tensor t;
        if (args.empty()) {
          t = rt::empty({0});
        } else if (args.size() == 1 && is_tensor(args[0])) {
          construct(v_h, alias_of(unwrap(args[0])));
          return;
        } else if (PyLong_Check(args[0].ptr())) {
          t = rt::empty(to_shape(args, "size"));
        } else if (args.size() == 1) {
          t = tensor_from_data(args[0], rt::kFloat32);
        } else {
          throw py::type_error("Tensor(): expected sizes (ints), a sequence of numbers or a Tensor");
        }
        construct(v_h, t.impl_ptr());
      },
      py::detail::is_new_style_constructor());

  cls.def_static(
      "_make_subclass",
      [](py::type type, const rt::Tensor& data, bool require_grad) {
        if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.ptr()), g_tensor_type))
          throw py::type_error(fmt::format("_make_subclass: {} is not a subclass of rustytorch.Tensor",
                                           py::str(type).cast<std::string>()));
        auto* tp = reinterpret_cast<PyTypeObject*>(type.ptr());
        py::object obj = py::reinterpret_steal<py::object>(g_tensor_type->tp_new(tp, py::tuple().ptr(), nullptr));
        if (!obj) throw py::error_already_set();
        auto impl = alias_of(data);
        if (require_grad) rt::Tensor(impl).requires_grad_(true);
        auto v_h = reinterpret_cast<py::detail::instance*>(obj.ptr())->get_value_and_holder(
            py::detail::get_type_info(typeid(rt::TensorImpl)));
        construct(v_h, std::move(impl));
        return obj;
      },
      py::arg("cls"), py::arg("data"), py::arg("require_grad") = false);

  cls.def_property_readonly("shape", [](const rt::Tensor& t) { return make_size(t.sizes()); })
      .def_property_readonly("dtype", [](const rt::Tensor& t) { return t.dtype(); })
      .def_property_readonly("device", [](const rt::Tensor& t) { return t.device(); })
      .def_property_readonly("ndim", [](const rt::Tensor& t) { return t.dim(); })
      .def_property_readonly("is_cuda", [](const rt::Tensor& t) { return t.device().is_cuda(); })
      .def_property_readonly("is_cpu", [](const rt::Tensor& t) { return t.device().is_cpu(); })
      .def_property_readonly("itemsize", [](const rt::Tensor& t) { return t.element_size(); })
      .def_property_readonly("nbytes", [](const rt::Tensor& t) { return t.nbytes(); })
      .def_property_readonly("_version", [](const rt::Tensor& t) { return t.version(); })
      .def("dim", [](const rt::Tensor& t) { return t.dim(); })
      .def("ndimension", [](const rt::Tensor& t) { return t.dim(); })
      .def("numel", [](const rt::Tensor& t) { return t.numel(); })
      .def("nelement", [](const rt::Tensor& t) { return t.numel(); })
      .def("element_size", [](const rt::Tensor& t) { return t.element_size(); })
      .def("storage_offset", [](const rt::Tensor& t) { return t.storage_offset(); })
      .def("data_ptr", [](const rt::Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); })
      .def("is_contiguous", [](const rt::Tensor& t) { return t.is_contiguous(); })
      .def("is_floating_point", [](const rt::Tensor& t) { return t.is_floating_point(); })
      .def("is_complex", [](const rt::Tensor&) { return false; })
      .def("_is_view", [](const rt::Tensor& t) { return t.impl().is_view; })
      .def("_shares_storage", [](const rt::Tensor& a, const rt::Tensor& b) { return a.storage().is_same(b.storage()); })
      .def("get_device", [](const rt::Tensor& t) { return t.device().is_cpu() ? -1 : t.device().index; })
      .def(
          "size",
          [](const rt::Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return make_size(t.sizes());
            return py::int_(t.size(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const rt::Tensor& t, py::object dim) -> py::object {
            if (dim.is_none()) return py::tuple(py::cast(t.strides()));
            return py::int_(t.stride(dim.cast<int64_t>()));
          },
          py::arg("dim") = py::none())
      .def("__len__",
           [](const rt::Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__hash__", [](py::handle self) { return reinterpret_cast<intptr_t>(self.ptr()); })
      .def("_str", [](const rt::Tensor& t) { return t.str(); })
      .def("item", [](const rt::Tensor& t) { return checked_item_tensor(t, "item()").item(); })
      .def("tolist",
           [](const rt::Tensor& t) -> py::object {
             rt::Tensor c = t.contiguous();
             if (c.dim() == 0) return scalar_to_py(c.item());
             if (c.numel() == 0 && c.dim() == 1) return py::list();
             return to_list(c, 0, c.storage_offset());
           })
      .def("__bool__",
           [](const rt::Tensor& t) {
             if (t.numel() != 1)
               throw std::runtime_error(fmt::format("Boolean value of Tensor with {} value is ambiguous",
                                                    t.numel() == 0 ? "no" : "more than one"));
             return t.item<bool>();
           })
      .def("__float__", [](const rt::Tensor& t) { return checked_item_tensor(t, "float()").item<double>(); })
      .def("__int__", [](const rt::Tensor& t) { return checked_item_tensor(t, "int()").item<int64_t>(); })
      .def("__index__", [](const rt::Tensor& t) {
        if (t.is_floating_point() || t.dtype() == rt::kBool || t.numel() != 1)
          throw py::type_error("only integer tensors of a single element can be converted to an index");
        return t.item<int64_t>();
      });

  // ---- autograd attributes ----------------------------------------------------------------
  cls.def_property(
         "requires_grad", [](const rt::Tensor& t) { return t.requires_grad(); },
         [](rt::Tensor& t, bool r) { t.requires_grad_(r); })
      .def(
          "requires_grad_", [](py::handle self, bool r) {
            unwrap(self).requires_grad_(r);
            return py::reinterpret_borrow<py::object>(self);
          },
          py::arg("requires_grad") = true)
      .def_property(
          "grad", [](const rt::Tensor& t) { return t.grad(); },
          [](const rt::Tensor& t, py::object g) {
            if (g.is_none()) return t.set_grad(rt::Tensor());
            if (!is_tensor(g)) throw py::type_error("assigned grad must be a Tensor or None");
            rt::Tensor gt = unwrap(g);
            if (gt.sizes() != t.sizes())
              throw py::value_error(fmt::format("assigned grad has shape {} but the tensor has shape {}",
                                                rt::format_shape(gt.sizes()), rt::format_shape(t.sizes())));
            if (gt.dtype() != t.dtype())
              throw py::type_error(fmt::format("assigned grad has dtype {} but the tensor has dtype {}",
                                               rt::dtype_name(gt.dtype()), rt::dtype_name(t.dtype())));
            t.set_grad(gt);
          })
      .def_property_readonly("is_leaf", [](const rt::Tensor& t) { return t.is_leaf(); })
      .def_property_readonly("grad_fn", [](const rt::Tensor& t) { return t.grad_fn(); })
      .def_property_readonly("output_nr", [](const rt::Tensor& t) { return t.output_nr(); })
      .def_property_readonly("retains_grad", [](const rt::Tensor& t) { return t.retains_grad(); })
      .def("retain_grad", [](const rt::Tensor& t) { t.retain_grad(); })
      .def("detach", [](const rt::Tensor& t) { return t.detach(); })
      .def("detach_", [](py::handle self) {
        unwrap(self).detach_();
        return py::reinterpret_borrow<py::object>(self);
      })
      .def_property(
          "data", [](const rt::Tensor& t) { return t.detach(); },
          [](const rt::Tensor& t, const rt::Tensor& src) {
            // Swaps the storage and geometry in place, keeping autograd state (torch's `.data = `).
            rt::TensorImpl& d = t.impl();
            d.storage = src.storage();
            d.sizes = src.sizes();
            d.strides = src.strides();
            d.offset = src.storage_offset();
            d.dtype = src.dtype();
          });
}

}  // namespace rtpy
