// Sorting and searching with torch's signatures: sort/argsort/msort, topk, kthvalue (values,
// indices named tuples), unique/unique_consecutive (a tensor, or a tuple with the inverse and
// counts asked for), searchsorted and bucketize (a number or a tensor of values).
#include <fmt/format.h>

#include "bind.h"

namespace rtpy {

namespace {
// torch's result for unique: the values alone, or a tuple with the parts asked for.
py::object unique_result(const rt::UniqueResult& r, bool return_inverse, bool return_counts) {
  if (!return_inverse && !return_counts) return wrap(r.values);
  py::list parts;
  parts.append(wrap(r.values));
  if (return_inverse) parts.append(wrap(r.inverse_indices));
  if (return_counts) parts.append(wrap(r.counts));
  return py::tuple(parts);
}

std::optional<std::string_view> side_of(const std::optional<std::string>& side) {
  if (!side) return std::nullopt;
  return std::string_view(*side);
}

rt::Tensor tensor_or_none(py::handle h, const char* op, const char* what) {
  if (h.is_none()) return {};
  if (!is_tensor(h)) throw py::type_error(fmt::format("{}: {} must be a Tensor or None", op, what));
  return unwrap(h);
}
}  // namespace

void bind_sorting(py::module_& m) {
  TensorClass cls = tensor_class(m);
  def_both(m, cls, "sort",
           [](const rt::Tensor& x, int64_t dim, bool descending, bool stable) {
             return values_indices("sort", run_sized(x.numel(), [&] { return rt::sort(x, dim, descending, stable); }));
           },
           py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(), py::arg("stable") = false);
  def_both(m, cls, "argsort",
           [](const rt::Tensor& x, int64_t dim, bool descending, bool stable) {
             return run_sized(x.numel(), [&] { return rt::argsort(x, dim, descending, stable); });
           },
           py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(), py::arg("stable") = false);
  def_both(m, cls, "msort", [](const rt::Tensor& x) { return run_sized(x.numel(), [&] { return rt::msort(x); }); });
  def_both(m, cls, "topk",
           [](const rt::Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
             return values_indices("topk", run_sized(x.numel(), [&] { return rt::topk(x, k, dim, largest, sorted); }));
           },
           py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted") = true);
  def_both(m, cls, "kthvalue",
           [](const rt::Tensor& x, int64_t k, int64_t dim, bool keepdim) {
             return values_indices("kthvalue", run_sized(x.numel(), [&] { return rt::kthvalue(x, k, dim, keepdim); }));
           },
           py::arg("k"), py::arg("dim") = -1, py::arg("keepdim") = false);
  def_both(m, cls, "unique",
           [](const rt::Tensor& x, bool sorted, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
             auto r = run_sized(x.numel(), [&] { return rt::unique(x, sorted, return_inverse, return_counts, dim); });
             return unique_result(r, return_inverse, return_counts);
           },
           py::arg("sorted") = true, py::arg("return_inverse") = false, py::arg("return_counts") = false,
           py::arg("dim") = py::none());
  def_both(m, cls, "unique_consecutive",
           [](const rt::Tensor& x, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
             auto r = run_sized(x.numel(), [&] { return rt::unique_consecutive(x, return_inverse, return_counts, dim); });
             return unique_result(r, return_inverse, return_counts);
           },
           py::arg("return_inverse") = false, py::arg("return_counts") = false, py::arg("dim") = py::none());
  m.def("searchsorted",
        [](const rt::Tensor& seq, py::handle values, bool out_int32, bool right, std::optional<std::string> side,
           py::handle sorter) {
          const rt::Tensor order = tensor_or_none(sorter, "searchsorted", "sorter");
          if (is_tensor(values)) return rt::searchsorted(seq, unwrap(values), out_int32, right, side_of(side), order);
          auto s = to_scalar(values);
          if (!s) throw py::type_error("searchsorted: input must be a Tensor or a number");
          return rt::searchsorted(seq, *s, out_int32, right, side_of(side), order);
        },
        py::arg("sorted_sequence"), py::arg("input"), py::kw_only(), py::arg("out_int32") = false,
        py::arg("right") = false, py::arg("side") = py::none(), py::arg("sorter") = py::none());
  m.def("bucketize",
        [](py::handle input, const rt::Tensor& boundaries, bool out_int32, bool right) {
          if (is_tensor(input)) return rt::bucketize(unwrap(input), boundaries, out_int32, right);
          auto s = to_scalar(input);
          if (!s) throw py::type_error("bucketize: input must be a Tensor or a number");
          return rt::bucketize(*s, boundaries, out_int32, right);
        },
        py::arg("input"), py::arg("boundaries"), py::kw_only(), py::arg("out_int32") = false, py::arg("right") = false);
}

}  // namespace rtpy
