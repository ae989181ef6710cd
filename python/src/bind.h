// bind.h — what every binding file shares: type casters and argument conversions.
//
//   m.def("exp", [](const rt::Tensor& x) { return rt::exp(x); });   // Tensor <-> rustytorch.Tensor
//   rt::ScalarType t = dtype_or(kw_dtype, rt::kFloat32);             // rustytorch.float32 <-> kFloat32
//
// Python's `rustytorch.Tensor` is the class bound over rt::TensorImpl with a
// std::shared_ptr<TensorImpl> holder; rt::Tensor converts to and from it through the caster
// below. Because the holder is the engine's own shared_ptr, pybind11's instance registry
// returns the SAME Python object for the same engine tensor while that object lives
// (p.grad is p.grad; a Parameter stays a Parameter when a hook or an in-place op returns it).
// An undefined rt::Tensor converts to None.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "rt/amp/autocast.h"
#include "rt/autograd/engine.h"
#include "rt/autograd/grad_mode.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/reduce.h"
#include "rt/ops/scan.h"
#include "rt/ops/select.h"
#include "rt/ops/shape.h"
#include "rt/ops/sort.h"
#include "rt/ops/view.h"
#include "rt/tensor.h"

namespace py = pybind11;

namespace rtpy {

using TensorClass = py::class_<rt::TensorImpl, std::shared_ptr<rt::TensorImpl>>;
inline TensorClass tensor_class(py::module_& m) { return py::reinterpret_borrow<TensorClass>(m.attr("Tensor")); }

// Set once by bind_tensor_class; used by the fast casters.
extern PyTypeObject* g_tensor_type;
// rustytorch.dtype singletons, indexed by ScalarType.
extern PyObject* g_dtype_objects[8];
extern PyTypeObject* g_dtype_type;
// rustytorch.Size (a tuple subclass defined in Python), or tuple until registered.
extern PyObject* g_size_type;

inline bool is_tensor(py::handle h) { return h && PyObject_TypeCheck(h.ptr(), g_tensor_type); }

// The engine tensor behind a rustytorch.Tensor (no type check).
inline rt::Tensor unwrap(py::handle h) {
  auto* inst = reinterpret_cast<py::detail::instance*>(h.ptr());
  auto v_h = inst->get_value_and_holder();
  if (!v_h.holder_constructed())
    throw py::type_error("rustytorch.Tensor object is not initialised (was Tensor.__init__ skipped?)");
  return rt::Tensor(v_h.holder<std::shared_ptr<rt::TensorImpl>>());
}

// The rustytorch.Tensor for an engine tensor: the existing Python object when there is one.
py::object wrap(const rt::Tensor& t);

// Python number (bool, int, float, numpy scalar, one-element tensor) -> Scalar; nullopt if not one.
std::optional<rt::Scalar> to_scalar(py::handle h);
py::object scalar_to_py(const rt::Scalar& s);

// Tensor or number -> Tensor (numbers become wrapped-number 0-dim tensors, as in PyTorch).
// Throws TypeError naming `op` for anything else.
rt::Tensor tensor_or_number(py::handle h, const char* op);

// int, sequence of ints, or Size -> Shape. `what` names the argument in errors.
rt::Shape to_shape(py::handle h, const char* what);
// dim=None -> {} (all dims), int -> {d}, sequence -> dims.
rt::Shape to_dims(py::handle h);

rt::Device to_device(py::handle h);
py::object make_size(const rt::Shape& s);

// An op called with an explicit dtype= runs in that dtype: autocast leaves it alone, as in torch.
class ExplicitDtype {
 public:
  explicit ExplicitDtype(const std::optional<rt::ScalarType>& dtype) {
    if (dtype) guard_.emplace();
  }

 private:
  std::optional<rt::amp::AutocastExcludedGuard> guard_;
};

// Runs `f` with the GIL released and Ctrl+C wired to rt::request_cancel() (see interrupt.cpp).
// Use for work that can be long; `InterruptedError` then becomes KeyboardInterrupt.
class LongCall {
 public:
  LongCall();
  ~LongCall();
  LongCall(const LongCall&) = delete;
  LongCall& operator=(const LongCall&) = delete;

 private:
  PyThreadState* saved_;
};

// Elements above which elementwise work is worth releasing the GIL for.
inline constexpr int64_t kLongCallElements = 1 << 16;

template <typename F>
decltype(auto) run_long(F&& f) {
  LongCall guard;
  return f();
}

// Runs f without the GIL when the work is large: f must not touch a Python object (convert arguments first).
template <typename F>
decltype(auto) run_sized(int64_t numel, F&& f) {
  if (numel < kLongCallElements) return f();
  LongCall guard;
  return f();
}

rt::Tensor tensor_from_data(py::handle data, std::optional<rt::ScalarType> dtype);
rt::Tensor from_numpy_array(py::handle arr);

// Binds `f` (first parameter: the tensor) as rt.<name>(input, ...) and Tensor.<name>(...).
template <typename F, typename... Extra>
void def_both(py::module_& m, TensorClass& cls, const char* name, F&& f, const Extra&... extra) {
  m.def(name, f, py::arg("input"), extra...);
  cls.def(name, std::forward<F>(f), extra...);
}

// A torch.return_types-like (values, indices) named tuple, one type per op name ("max", "sort").
py::object values_indices(const char* name, const std::pair<rt::Tensor, rt::Tensor>& r);

// Returns `self` itself (in-place methods): the same Python object, subclass kept.
inline py::object same(py::handle self) { return py::reinterpret_borrow<py::object>(self); }

void bind_errors(py::module_& m);
void bind_dtypes(py::module_& m);
void bind_tensor_class(py::module_& m);
void bind_creation(py::module_& m);
void bind_numpy(py::module_& m);
void bind_operators(py::module_& m);
void bind_pointwise(py::module_& m);
void bind_reductions(py::module_& m);
void bind_shape_ops(py::module_& m);
void bind_sorting(py::module_& m);
void bind_selection(py::module_& m);
void bind_scans(py::module_& m);
void bind_nn_ops(py::module_& m);
void bind_indexing(py::module_& m);
void bind_autograd(py::module_& m);
void bind_amp(py::module_& m);
void bind_interrupt(py::module_& m);
void bind_io(py::module_& m);
void bind_optim_steps(py::module_& m);  // the optimizers' per-parameter updates (optim_steps.cpp)
void bind_profiler(py::module_& m);
void bind_plugin_ops(py::module_& m);  // the submodule _C._ops (plugin_ops.cpp): rt.ops
void bind_remote(py::module_& m);  // the _C._remote submodule
void bind_backends(py::module_& m);  // the submodule _C._backends (backends.cpp): rt.backends.mkldnn
void bind_threads(py::module_& m);  // set_num_threads / get_num_threads (threads.cpp)
void bind_debug(py::module_& m);  // the submodule _C._debug
void bind_cuda(py::module_& parent, py::module_& m);  // the submodule _C._cuda, and Tensor._to_device
void bind_dist(py::module_& m);        // the submodule _C._dist (dist_module.cpp): exceptions, then the rest
void bind_dist_store(py::module_& dist);  // _C._dist's stores (dist_store.cpp)
void bind_process_groups(py::module_& dist);  // _C._dist's groups and collectives (dist_groups.cpp)

}  // namespace rtpy

namespace pybind11::detail {

// rt::Shape converts like the std::vector<int64_t> it replaced: any sequence of ints in, a list out.
template <> struct type_caster<rt::Shape> : list_caster<rt::Shape, int64_t> {};

template <> struct type_caster<rt::Tensor> {
  PYBIND11_TYPE_CASTER(rt::Tensor, const_name("Tensor"));
  bool load(handle src, bool) {
    if (!rtpy::is_tensor(src)) return false;
    value = rtpy::unwrap(src);
    return true;
  }
  static handle cast(const rt::Tensor& t, return_value_policy, handle) { return rtpy::wrap(t).release(); }
};

template <> struct type_caster<rt::ScalarType> {
  PYBIND11_TYPE_CASTER(rt::ScalarType, const_name("dtype"));
  bool load(handle src, bool);
  static handle cast(rt::ScalarType t, return_value_policy, handle) {
    PyObject* o = rtpy::g_dtype_objects[int(t)];
    Py_INCREF(o);
    return o;
  }
};

template <> struct type_caster<rt::Scalar> {
  PYBIND11_TYPE_CASTER(rt::Scalar, const_name("Number"));
  bool load(handle src, bool) {
    auto s = rtpy::to_scalar(src);
    if (!s) return false;
    value = *s;
    return true;
  }
  static handle cast(const rt::Scalar& s, return_value_policy, handle) { return rtpy::scalar_to_py(s).release(); }
};

}  // namespace pybind11::detail
