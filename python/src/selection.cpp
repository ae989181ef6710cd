// Selection with torch's signatures: nonzero(*, as_tuple=False), argwhere, masked_select(mask),
// take(index), take_along_dim(indices, dim=None).
#include "bind.h"

namespace rtpy {

void bind_selection(py::module_& m) {
  TensorClass cls = tensor_class(m);
  def_both(m, cls, "nonzero",
           [](const rt::Tensor& x, bool as_tuple) -> py::object {
             if (!as_tuple) return wrap(run_sized(x.numel(), [&] { return rt::nonzero(x); }));
             const rt::TensorList columns = run_sized(x.numel(), [&] { return rt::nonzero_tuple(x); });
             py::tuple out(columns.size());
             for (size_t i = 0; i < columns.size(); ++i) out[i] = wrap(columns[i]);
             return out;
           },
           py::kw_only(), py::arg("as_tuple") = false);
  def_both(m, cls, "argwhere", [](const rt::Tensor& x) { return run_sized(x.numel(), [&] { return rt::argwhere(x); }); });
  def_both(m, cls, "masked_select",
           [](const rt::Tensor& x, const rt::Tensor& mask) {
             return run_sized(x.numel(), [&] { return rt::masked_select(x, mask); });
           },
           py::arg("mask"));
  def_both(m, cls, "take",
           [](const rt::Tensor& x, const rt::Tensor& index) {
             return run_sized(index.numel(), [&] { return rt::take(x, index); });
           },
           py::arg("index"));
  def_both(m, cls, "take_along_dim",
           [](const rt::Tensor& x, const rt::Tensor& indices, std::optional<int64_t> dim) {
             return run_sized(indices.numel(), [&] { return rt::take_along_dim(x, indices, dim); });
           },
           py::arg("indices"), py::arg("dim") = py::none());
}

}  // namespace rtpy
