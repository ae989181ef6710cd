// Scans with torch's signatures: cumsum/cumprod(dim, *, dtype=None), cummax/cummin(dim) (values,
// indices named tuples), logcumsumexp(dim).
#include "bind.h"

namespace rtpy {

void bind_scans(py::module_& m) {
  TensorClass cls = tensor_class(m);
  def_both(m, cls, "cumsum",
           [](const rt::Tensor& x, int64_t dim, std::optional<rt::ScalarType> dtype) {
             ExplicitDtype explicit_dtype(dtype);
             return run_sized(x.numel(), [&] { return rt::cumsum(x, dim, dtype); });
           },
           py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  def_both(m, cls, "cumprod",
           [](const rt::Tensor& x, int64_t dim, std::optional<rt::ScalarType> dtype) {
             ExplicitDtype explicit_dtype(dtype);
             return run_sized(x.numel(), [&] { return rt::cumprod(x, dim, dtype); });
           },
           py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none());
  def_both(m, cls, "cummax",
           [](const rt::Tensor& x, int64_t dim) {
             return values_indices("cummax", run_sized(x.numel(), [&] { return rt::cummax(x, dim); }));
           },
           py::arg("dim"));
  def_both(m, cls, "cummin",
           [](const rt::Tensor& x, int64_t dim) {
             return values_indices("cummin", run_sized(x.numel(), [&] { return rt::cummin(x, dim); }));
           },
           py::arg("dim"));
  def_both(m, cls, "logcumsumexp",
           [](const rt::Tensor& x, int64_t dim) { return run_sized(x.numel(), [&] { return rt::logcumsumexp(x, dim); }); },
           py::arg("dim"));
}

}  // namespace rtpy
