// Reductions with torch's signatures: sum(dim=None, keepdim=False, dtype=None), max(dim) ->
// (values, indices), var(dim, unbiased, keepdim, correction=), norm(p, dim, keepdim) ...
#include <fmt/format.h>

#include <map>

#include "bind.h"

namespace rtpy {

py::object values_indices(const char* name, const std::pair<rt::Tensor, rt::Tensor>& r) {
  static auto* types = new std::map<std::string, py::object>();
  auto it = types->find(name);
  if (it == types->end()) {
    py::object nt = py::module_::import("collections").attr("namedtuple")(name, py::make_tuple("values", "indices"));
    it = types->emplace(name, nt).first;
  }
  return it->second(wrap(r.first), wrap(r.second));
}

namespace {
rt::Tensor cast_if(const rt::Tensor& t, std::optional<rt::ScalarType> dtype) {
  return dtype && *dtype != t.dtype() ? rt::to_dtype(t, *dtype) : t;
}

std::optional<int64_t> one_dim(py::handle dim, const char* op) {
  if (dim.is_none()) return std::nullopt;
  rt::Shape d = to_dims(dim);
  if (d.size() != 1) throw py::type_error(fmt::format("{}: dim must be a single int", op));
  return d[0];
}

int64_t correction_of(py::handle unbiased, py::handle correction) {
  if (!correction.is_none()) return correction.cast<int64_t>();
  if (!unbiased.is_none()) return unbiased.cast<bool>() ? 1 : 0;
  return 1;
}

py::object minmax(const rt::Tensor& x, py::handle dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "max" : "min";
  if (dim.is_none()) return wrap(run_sized(x.numel(), [&] { return is_max ? rt::max(x) : rt::min(x); }));
  if (is_tensor(dim)) return wrap(is_max ? rt::maximum(x, unwrap(dim)) : rt::minimum(x, unwrap(dim)));
  int64_t d = *one_dim(dim, op);
  auto r = run_sized(x.numel(), [&] { return is_max ? rt::max(x, d, keepdim) : rt::min(x, d, keepdim); });
  return values_indices(op, r);
}
}  // namespace

void bind_reductions(py::module_& m) {
  TensorClass cls = tensor_class(m);
  using DimsReduce = rt::Tensor (*)(const rt::Tensor&, const rt::Shape&, bool);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, DimsReduce>>{{"sum", &rt::sum}, {"mean", &rt::mean}}) {
    DimsReduce f = fn;
    def_both(m, cls, name,
             [f](const rt::Tensor& x, py::handle dim, bool keepdim, std::optional<rt::ScalarType> dtype) {
               ExplicitDtype explicit_dtype(dtype);
               rt::Tensor c = cast_if(x, dtype);
               const rt::Shape dims = to_dims(dim);  // with the GIL: run_sized releases it
               return run_sized(x.numel(), [&] { return f(c, dims, keepdim); });
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none());
  }
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, DimsReduce>>{{"amax", &rt::amax}, {"amin", &rt::amin}}) {
    DimsReduce f = fn;
    def_both(m, cls, name,
             [f](const rt::Tensor& x, py::handle dim, bool keepdim) {
               const rt::Shape dims = to_dims(dim);  // with the GIL: run_sized releases it
               return run_sized(x.numel(), [&] { return f(x, dims, keepdim); });
             },
             py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
  }
  def_both(m, cls, "prod",
           [](const rt::Tensor& x, py::handle dim, bool keepdim, std::optional<rt::ScalarType> dtype) {
             ExplicitDtype explicit_dtype(dtype);
             rt::Tensor c = cast_if(x, dtype);
             auto d = one_dim(dim, "prod");
             return run_sized(x.numel(), [&] { return rt::prod(c, d, keepdim); });
           },
           py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("dtype") = py::none());
  def_both(m, cls, "max",
           [](const rt::Tensor& x, py::handle dim, bool keepdim) { return minmax(x, dim, keepdim, true); },
           py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both(m, cls, "min",
           [](const rt::Tensor& x, py::handle dim, bool keepdim) { return minmax(x, dim, keepdim, false); },
           py::arg("dim") = py::none(), py::arg("keepdim") = false);
  using ArgReduce = rt::Tensor (*)(const rt::Tensor&, std::optional<int64_t>, bool);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, ArgReduce>>{{"argmax", &rt::argmax}, {"argmin", &rt::argmin},
                          {"all", &rt::all}, {"any", &rt::any}}) {
    ArgReduce f = fn;
    const char* op = name;
    def_both(m, cls, name,
             [f, op](const rt::Tensor& x, py::handle dim, bool keepdim) {
               auto d = one_dim(dim, op);
               return run_sized(x.numel(), [&] { return f(x, d, keepdim); });
             },
             py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }
  using StatReduce = rt::Tensor (*)(const rt::Tensor&, const rt::Shape&, int64_t, bool);
  for (auto [name, fn] : std::initializer_list<std::pair<const char*, StatReduce>>{{"var", &rt::var}, {"std", &rt::std}}) {
    StatReduce f = fn;
    def_both(m, cls, name,
             [f](const rt::Tensor& x, py::handle dim, py::handle unbiased, bool keepdim, py::handle correction) {
               if (PyBool_Check(dim.ptr())) {  // var(x, False): the old (input, unbiased) form
                 unbiased = dim;
                 dim = py::none();
               }
               const int64_t c = correction_of(unbiased, correction);
               const rt::Shape dims = to_dims(dim);  // with the GIL: run_sized releases it
               return run_sized(x.numel(), [&] { return f(x, dims, c, keepdim); });
             },
             py::arg("dim") = py::none(), py::arg("unbiased") = py::none(), py::arg("keepdim") = false, py::kw_only(),
             py::arg("correction") = py::none());
  }
  def_both(m, cls, "norm",
           [](const rt::Tensor& x, py::handle p, py::handle dim, bool keepdim, std::optional<rt::ScalarType> dtype) {
             rt::Scalar order = 2;
             if (PyUnicode_Check(p.ptr())) {
               if (p.cast<std::string>() != "fro")
                 throw rt::NotImplementedError(fmt::format("norm: p='{}' is not supported; use p='fro' or a number",
                                                           p.cast<std::string>()));
             } else if (!p.is_none()) {
               auto s = to_scalar(p);
               if (!s) throw py::type_error("norm: p must be a number or 'fro'");
               order = *s;
             }
             rt::Tensor c = cast_if(x, dtype);
             const rt::Shape dims = to_dims(dim);  // with the GIL: run_sized releases it
             return run_sized(x.numel(), [&] { return rt::norm(c, order, dims, keepdim); });
           },
           py::arg("p") = "fro", py::arg("dim") = py::none(), py::arg("keepdim") = false, py::arg("dtype") = py::none());
  def_both(m, cls, "logsumexp",
           [](const rt::Tensor& x, py::handle dim, bool keepdim) {
             const rt::Shape dims = to_dims(dim);  // with the GIL: run_sized releases it
             return run_sized(x.numel(), [&] { return rt::logsumexp(x, dims, keepdim); });
           },
           py::arg("dim"), py::arg("keepdim") = false);
}

}  // namespace rtpy
