// Python operators on Tensor (+ - * / // % @ ** comparisons, reflected and in-place forms) and the
// arithmetic functions add/sub/mul/div/remainder/fmod/floor_divide. Operators take raw handles so that pybind11 has one
// overload to try and nothing to convert: `a + b` on small tensors is dominated by the engine.
#include <fmt/format.h>

#include "bind.h"

namespace rtpy {

namespace {
using Binary = rt::Tensor (*)(const rt::Tensor&, const rt::Tensor&);
using InplaceBinary = rt::Tensor& (*)(rt::Tensor&, const rt::Tensor&);

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

// The other operand as a tensor, or an undefined tensor when it is neither tensor nor number.
rt::Tensor operand(py::handle h) {
  if (is_tensor(h)) return unwrap(h);
  if (auto s = to_scalar(h)) return rt::scalar_to_tensor(*s);
  return {};
}

rt::Tensor add2(const rt::Tensor& a, const rt::Tensor& b) { return rt::add(a, b); }
rt::Tensor sub2(const rt::Tensor& a, const rt::Tensor& b) { return rt::sub(a, b); }
rt::Tensor pow2(const rt::Tensor& a, const rt::Tensor& b) {
  if (b.impl().wrapped_number) return rt::pow(a, b.item());
  return rt::pow(a, b);
}
rt::Tensor rpow2(const rt::Tensor& base, const rt::Tensor& e) {
  if (base.impl().wrapped_number) return rt::pow(base.item(), e);
  return rt::pow(base, e);
}
rt::Tensor matmul2(const rt::Tensor& a, const rt::Tensor& b) {
  if (a.impl().wrapped_number || b.impl().wrapped_number)
    throw py::type_error("matmul (@): both operands must be tensors, not numbers");
  return rt::matmul(a, b);  // forward()/reflected() release the GIL around it
}
rt::Tensor logical_binary(const char* op, const rt::Tensor& a, const rt::Tensor& b, Binary logical) {
  if (a.dtype() == rt::kBool && b.dtype() == rt::kBool) return logical(a, b);
  throw rt::NotImplementedError(fmt::format("{} on {} and {} tensors: the engine has only the logical (bool) form; "
                                            "use bool tensors, or logical_{} explicitly", op,
                                            rt::dtype_name(a.dtype()), rt::dtype_name(b.dtype()), op));
}
rt::Tensor and2(const rt::Tensor& a, const rt::Tensor& b) { return logical_binary("and", a, b, &rt::logical_and); }
rt::Tensor or2(const rt::Tensor& a, const rt::Tensor& b) { return logical_binary("or", a, b, &rt::logical_or); }
rt::Tensor xor2(const rt::Tensor& a, const rt::Tensor& b) { return logical_binary("xor", a, b, &rt::logical_xor); }
rt::Tensor remainder2(const rt::Tensor& a, const rt::Tensor& b) { return rt::remainder(a, b); }
rt::Tensor floor_divide2(const rt::Tensor& a, const rt::Tensor& b) { return rt::floor_divide(a, b); }

rt::Tensor& add_inplace(rt::Tensor& a, const rt::Tensor& b) { return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::add_(a, b); }); }
rt::Tensor& sub_inplace(rt::Tensor& a, const rt::Tensor& b) { return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::sub_(a, b); }); }
rt::Tensor& mul_inplace(rt::Tensor& a, const rt::Tensor& b) { return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::mul_(a, b); }); }
rt::Tensor& div_inplace(rt::Tensor& a, const rt::Tensor& b) { return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::div_(a, b); }); }
rt::Tensor& remainder_inplace(rt::Tensor& a, const rt::Tensor& b) {
  return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::remainder_(a, b); });
}
rt::Tensor& fmod_inplace(rt::Tensor& a, const rt::Tensor& b) {
  return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::fmod_(a, b); });
}
rt::Tensor& floor_divide_inplace(rt::Tensor& a, const rt::Tensor& b) {
  return run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::floor_divide_(a, b); });
}
rt::Tensor& pow_inplace(rt::Tensor& a, const rt::Tensor& b) {
  if (b.dim() == 0) return rt::pow_(a, b.item());
  throw rt::NotImplementedError("pow_ (**=) with a tensor exponent is not available; use a = a ** b");
}

template <Binary F>
py::object forward(py::handle self, py::handle other) {
  rt::Tensor b = operand(other);
  if (!b.defined()) return not_implemented();
  rt::Tensor a = unwrap(self);
  return wrap(run_sized(a.numel(), [&] { return F(a, b); }));
}

template <Binary F>
py::object reflected(py::handle self, py::handle other) {
  rt::Tensor b = operand(other);
  if (!b.defined()) return not_implemented();
  return wrap(F(b, unwrap(self)));
}

template <InplaceBinary F>
py::object inplace(py::handle self, py::handle other) {
  rt::Tensor b = operand(other);
  if (!b.defined()) return not_implemented();
  rt::Tensor a = unwrap(self);
  F(a, b);
  return py::reinterpret_borrow<py::object>(self);
}

// Note [Number slots]
// `a + b` on a pybind11 class takes the long way: the type's nb_add slot is CPython's generic
// slot_nb_add, which looks __add__ up on the type, binds it, and calls pybind11's dispatcher
// (argument casters, a function_call record, overload resolution) before reaching forward<F>.
// For + - * / the Tensor type's number slots point straight at binary_slot<F>, which runs the
// same forward/reflected code: about a third of the cost of `a + b` on a small tensor. CPython
// calls a slot for both `t + x` and `x + t`, so the slot tells them apart by which operand is a
// Tensor. The __add__/__radd__ methods stay for explicit calls, and a Python subclass (Parameter)
// gets CPython's generic slot, which still finds them.
PyObject* raise_translated() {  // the translation pybind11's dispatcher applies, for a raw slot
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    if (!py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) &&
        !py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators))
      PyErr_SetString(PyExc_SystemError, "rustytorch: an exception escaped every exception translator");
  }
  return nullptr;
}

template <Binary F>
PyObject* binary_slot(PyObject* a, PyObject* b) {
  try {
    if (is_tensor(a)) return forward<F>(a, b).release().ptr();
    return reflected<F>(b, a).release().ptr();
  } catch (...) {
    return raise_translated();
  }
}

template <Binary F>
void def_binary(TensorClass& cls, const char* name, const char* rname) {
  cls.def(name, &forward<F>, py::is_operator());
  if (rname) cls.def(rname, &reflected<F>, py::is_operator());
}
}  // namespace

void bind_operators(py::module_& m) {
  TensorClass cls = tensor_class(m);
  def_binary<&add2>(cls, "__add__", "__radd__");
  def_binary<&sub2>(cls, "__sub__", "__rsub__");
  def_binary<&rt::mul>(cls, "__mul__", "__rmul__");
  def_binary<&rt::div>(cls, "__truediv__", "__rtruediv__");
  def_binary<&pow2>(cls, "__pow__", nullptr);
  cls.def("__rpow__", &reflected<&rpow2>, py::is_operator());
  def_binary<&matmul2>(cls, "__matmul__", "__rmatmul__");
  def_binary<&floor_divide2>(cls, "__floordiv__", "__rfloordiv__");
  def_binary<&remainder2>(cls, "__mod__", "__rmod__");
  def_binary<&and2>(cls, "__and__", "__rand__");
  def_binary<&or2>(cls, "__or__", "__ror__");
  def_binary<&xor2>(cls, "__xor__", "__rxor__");
  def_binary<&rt::eq>(cls, "__eq__", nullptr);
  def_binary<&rt::ne>(cls, "__ne__", nullptr);
  def_binary<&rt::lt>(cls, "__lt__", nullptr);
  def_binary<&rt::le>(cls, "__le__", nullptr);
  def_binary<&rt::gt>(cls, "__gt__", nullptr);
  def_binary<&rt::ge>(cls, "__ge__", nullptr);
  cls.def("__iadd__", &inplace<&add_inplace>, py::is_operator());
  cls.def("__isub__", &inplace<&sub_inplace>, py::is_operator());
  cls.def("__imul__", &inplace<&mul_inplace>, py::is_operator());
  cls.def("__itruediv__", &inplace<&div_inplace>, py::is_operator());
  cls.def("__ifloordiv__", &inplace<&floor_divide_inplace>, py::is_operator());
  cls.def("__imod__", &inplace<&remainder_inplace>, py::is_operator());
  cls.def("__ipow__", &inplace<&pow_inplace>, py::is_operator());
  cls.def("__neg__", [](const rt::Tensor& a) { return rt::neg(a); });
  cls.def("__pos__", [](py::handle self) { return py::reinterpret_borrow<py::object>(self); });
  cls.def("__abs__", [](const rt::Tensor& a) { return rt::abs(a); });
  cls.def("__invert__", [](const rt::Tensor& a) {
    if (a.dtype() != rt::kBool)
      throw rt::NotImplementedError(fmt::format("~ on a {} tensor: the engine has only logical_not (bool tensors)",
                                                rt::dtype_name(a.dtype())));
    return rt::logical_not(a);
  });
  // After every operator method: setting one (type_setattro) resets its slot to CPython's generic one.
  PyNumberMethods* number = reinterpret_cast<PyTypeObject*>(cls.ptr())->tp_as_number;  // Note [Number slots]
  number->nb_add = &binary_slot<&add2>;
  number->nb_subtract = &binary_slot<&sub2>;
  number->nb_multiply = &binary_slot<&rt::mul>;
  number->nb_true_divide = &binary_slot<&rt::div>;

  // add/sub with alpha, mul/div: as rt.<op>(input, other) and Tensor.<op>(other).
  auto add_fn = [](py::handle a, py::handle b, const rt::Scalar& alpha) {
    rt::Tensor x = tensor_or_number(a, "add"), y = tensor_or_number(b, "add");
    return run_sized(x.numel(), [&] { return rt::add(x, y, alpha); });
  };
  auto sub_fn = [](py::handle a, py::handle b, const rt::Scalar& alpha) {
    rt::Tensor x = tensor_or_number(a, "sub"), y = tensor_or_number(b, "sub");
    return run_sized(x.numel(), [&] { return rt::sub(x, y, alpha); });
  };
  auto mul_fn = [](py::handle a, py::handle b) {
    rt::Tensor x = tensor_or_number(a, "mul"), y = tensor_or_number(b, "mul");
    return run_sized(x.numel(), [&] { return rt::mul(x, y); });
  };
  auto div_fn = [](py::handle a, py::handle b, std::optional<std::string> rounding_mode) {
    rt::Tensor x = tensor_or_number(a, "div"), y = tensor_or_number(b, "div");
    return run_sized(x.numel(), [&] { return rounding_mode ? rt::div(x, y, *rounding_mode) : rt::div(x, y); });
  };
  // remainder and floor_divide take a number first (torch.remainder(2, t)); fmod does not, as in torch.
  auto remainder_fn = [](py::handle a, py::handle b) {
    rt::Tensor x = tensor_or_number(a, "remainder"), y = tensor_or_number(b, "remainder");
    return run_sized(x.numel(), [&] { return rt::remainder(x, y); });
  };
  auto floor_divide_fn = [](py::handle a, py::handle b) {
    rt::Tensor x = tensor_or_number(a, "floor_divide"), y = tensor_or_number(b, "floor_divide");
    return run_sized(x.numel(), [&] { return rt::floor_divide(x, y); });
  };
  auto fmod_fn = [](py::handle a, py::handle b) {
    if (!is_tensor(a))
      throw py::type_error(fmt::format("fmod(): argument 'input' must be Tensor, not {}", Py_TYPE(a.ptr())->tp_name));
    rt::Tensor x = unwrap(a), y = tensor_or_number(b, "fmod");
    return run_sized(x.numel(), [&] { return rt::fmod(x, y); });
  };
  for (py::object target : {py::object(m), py::object(cls)}) {
    const bool method = !py::isinstance<py::module_>(target);
    auto def = [&](const char* name, auto fn, auto... extra) {
      py::setattr(target, name,
                  method ? py::cpp_function(fn, py::name(name), py::is_method(target), extra...)
                         : py::cpp_function(fn, py::name(name), py::scope(target), py::arg("input"), extra...));
    };
    def("add", add_fn, py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    def("sub", sub_fn, py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    def("subtract", sub_fn, py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
    def("mul", mul_fn, py::arg("other"));
    def("multiply", mul_fn, py::arg("other"));
    def("div", div_fn, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
    def("divide", div_fn, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
    def("true_divide", div_fn, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
    def("remainder", remainder_fn, py::arg("other"));
    def("fmod", fmod_fn, py::arg("other"));
    def("floor_divide", floor_divide_fn, py::arg("other"));
  }

  // In-place arithmetic (optimizers): add_(other, alpha=), sub_, mul_, div_.
  cls.def(
      "add_",
      [](py::handle self, py::handle other, const rt::Scalar& alpha) {
        rt::Tensor a = unwrap(self), b = tensor_or_number(other, "add_");
        run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::add_(a, b, alpha); });
        return py::reinterpret_borrow<py::object>(self);
      },
      py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  cls.def(
      "sub_",
      [](py::handle self, py::handle other, const rt::Scalar& alpha) {
        rt::Tensor a = unwrap(self), b = tensor_or_number(other, "sub_");
        run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::sub_(a, b, alpha); });
        return py::reinterpret_borrow<py::object>(self);
      },
      py::arg("other"), py::kw_only(), py::arg("alpha") = 1);
  cls.def(
      "mul_",
      [](py::handle self, py::handle other) {
        rt::Tensor a = unwrap(self), b = tensor_or_number(other, "mul_");
        mul_inplace(a, b);
        return py::reinterpret_borrow<py::object>(self);
      },
      py::arg("other"));
  cls.def(
      "div_",
      [](py::handle self, py::handle other, std::optional<std::string> rounding_mode) {
        rt::Tensor a = unwrap(self), b = tensor_or_number(other, "div_");
        if (rounding_mode) run_sized(a.numel(), [&]() -> rt::Tensor& { return rt::div_(a, b, *rounding_mode); });
        else div_inplace(a, b);
        return py::reinterpret_borrow<py::object>(self);
      },
      py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  // remainder_, fmod_, floor_divide_: self = self op other, in self's dtype.
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, InplaceBinary>>{
           {"remainder_", &remainder_inplace}, {"fmod_", &fmod_inplace}, {"floor_divide_", &floor_divide_inplace}}) {
    cls.def(
        name,
        [name, fn](py::handle self, py::handle other) {
          rt::Tensor a = unwrap(self), b = tensor_or_number(other, name);
          fn(a, b);
          return py::reinterpret_borrow<py::object>(self);
        },
        py::arg("other"));
  }
}

}  // namespace rtpy
