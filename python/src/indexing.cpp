// Tensor.__getitem__ / __setitem__ with PyTorch's rules.
// Note [Indexing]
// Basic entries (ints, slices, None, Ellipsis) become views (select/slice/unsqueeze), so
// results alias the tensor and autograd flows through the view ops. Integer tensors, lists and
// bool masks are advanced indices: masks turn into one integer index per mask dim (their
// nonzero positions); all advanced indices broadcast together and the selected elements are
// gathered with index_select over the (permuted, flattened) advanced dims, which is
// differentiable. As in numpy/torch, the broadcast index dims replace the advanced dims in
// place when those are adjacent, and go first otherwise. Assignment writes through the basic
// view with copy_/fill_; with advanced indices, the same gathering applied to a tensor of
// storage offsets gives the element each value goes to.
// On a GPU: index tensors and lists move to the indexed tensor's device; masks become positions
// on the host (a copy of the mask, as PyTorch's nonzero syncs too) that are then moved there;
// the range check of integer indices reads their min and max back. Assignment gathers element
// positions instead of storage offsets, finds each element's writer with integer scatter_adds
// and copies the values in with index_select and where (assign_on_device): it costs O(numel
// of the indexed view), waits for the device, and gives the CPU's result, also when an element
// is assigned twice (the last value wins). x[mask] = number with a mask of x's shape is one
// masked_fill_, with no wait.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "bind.h"

namespace rtpy {

namespace {
struct Indexed {
  rt::Tensor view;                                     // after the basic entries
  std::vector<std::pair<int64_t, rt::Tensor>> advanced;  // (dim of view, int64 index)
};

rt::Tensor index_tensor(py::handle h) {
  if (is_tensor(h)) return unwrap(h);
  return tensor_from_data(h, std::nullopt);
}

int64_t count_consumed(const py::tuple& idx) {
  int64_t n = 0;
  for (py::handle h : idx) {
    if (h.is_none() || h.ptr() == Py_Ellipsis) continue;
    if (is_tensor(h) && (unwrap(h).dtype() == rt::kBool || unwrap(h).dtype() == rt::kUInt8)) n += unwrap(h).dim();
    else ++n;
  }
  return n;
}

// numpy's (and torch's) legacy rule: a short list holding sequences, tensors, slices, None or
// Ellipsis is a tuple of indices (x[[[0, 1], [2, 1]]] == x[[0, 1], [2, 1]]).
bool list_is_tuple(py::handle index) {
  if (!PyList_Check(index.ptr()) || PyList_GET_SIZE(index.ptr()) >= 32) return false;
  for (py::handle e : py::reinterpret_borrow<py::list>(index))
    if (is_tensor(e) || PySequence_Check(e.ptr()) || PySlice_Check(e.ptr()) || e.is_none() || e.ptr() == Py_Ellipsis)
      return true;
  return false;
}

Indexed apply_basic(const rt::Tensor& self, py::handle index) {
  py::tuple idx = PyTuple_Check(index.ptr()) ? py::reinterpret_borrow<py::tuple>(index)
                  : list_is_tuple(index)     ? py::tuple(py::reinterpret_borrow<py::list>(index))
                                             : py::make_tuple(index);
  const int64_t consumed = count_consumed(idx);
  if (consumed > self.dim())
    throw rt::IndexError(fmt::format("too many indices for tensor of dimension {} ({} given)", self.dim(), consumed));
  Indexed r{self, {}};
  int64_t d = 0;                      // dim of r.view the next index applies to
  int64_t selected = 0;  // ints so far: torch numbers dims as d + selected (Nones count, ints too)
  bool seen_ellipsis = false;
  for (py::handle h : idx) {
    if (h.is_none()) {
      r.view = rt::unsqueeze(r.view, d++);
    } else if (h.ptr() == Py_Ellipsis) {
      if (seen_ellipsis) throw rt::IndexError("an index can only have a single ellipsis ('...')");
      seen_ellipsis = true;
      d += self.dim() - consumed;
    } else if (PyBool_Check(h.ptr())) {
      throw rt::NotImplementedError("indexing with a Python bool (x[True]) is not supported; use None to add a dim");
    } else if (PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !is_tensor(h) && !PySequence_Check(h.ptr()))) {
      // ints and integer scalars (numpy.int64); arrays and sequences are advanced indices below
      const int64_t size = r.view.size(d);
      auto as_int = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
      if (!as_int) throw py::error_already_set();
      int overflow = 0;
      const long long i = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
      if (overflow || i < -size || i >= size)
        throw rt::IndexError(fmt::format("index {} is out of bounds for dimension {} with size {}",
                                         py::str(as_int).cast<std::string>(), d + selected, size));
      r.view = rt::select(r.view, d, i < 0 ? i + size : i);
      ++selected;
    } else if (PySlice_Check(h.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      if (step <= 0) throw py::value_error("step must be greater than zero");
      const Py_ssize_t size = Py_ssize_t(r.view.size(d));
      PySlice_AdjustIndices(size, &start, &stop, step);
      if (stop < start) stop = start;
      if (!(start == 0 && stop == size && step == 1)) r.view = rt::slice(r.view, d, start, stop, step);
      ++d;
    } else if (is_tensor(h) || PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()) || PySequence_Check(h.ptr())) {
      rt::Tensor t = index_tensor(h);
      const rt::Device device = self.device();
      if (t.dtype() == rt::kBool || t.dtype() == rt::kUInt8) {
        for (int64_t k = 0; k < t.dim(); ++k)
          if (t.size(k) != r.view.size(d + k))
            throw rt::IndexError(fmt::format("The shape of the mask {} at index {} does not match the shape of the "
                                             "indexed tensor {} at index {}", rt::format_shape(t.sizes()), k,
                                             rt::format_shape(r.view.sizes()), d + k));
        if (t.dim() == 0)
          throw rt::NotImplementedError("indexing with a 0-dim bool tensor is not supported; use a mask with dims");
        for (const rt::Tensor& pos : rt::nonzero_tuple(t.to(rt::kBool).cpu())) r.advanced.emplace_back(d++, pos.to(device));
      } else if (t.dtype() == rt::kInt64 || t.dtype() == rt::kInt32) {
        r.advanced.emplace_back(d++, t.to(rt::kInt64).to(device));
      } else {
        throw rt::IndexError(fmt::format("tensors used as indices must be long, int, byte or bool tensors, got {}",
                                         rt::dtype_name(t.dtype())));
      }
    } else {
      throw rt::IndexError(fmt::format("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                       "Variables are valid indices (got {})", Py_TYPE(h.ptr())->tp_name));
    }
  }
  return r;
}

[[noreturn]] void throw_out_of_bounds(int64_t index, int64_t dim, int64_t size) {
  throw rt::IndexError(fmt::format("index {} is out of bounds for dimension {} with size {}", index, dim, size));
}

// normalise_indices' check and wrap as device ops: the index's min and max are read back.
rt::Tensor wrap_on_device(const rt::Tensor& idx, const rt::Shape& bshape, int64_t dim, int64_t size) {
  rt::NoGradGuard no_grad;
  const rt::Tensor e = rt::expand(idx.detach(), bshape);
  if (e.numel() > 0) {  // then every value of idx is used
    const std::vector<int64_t> range = rt::stack({rt::amin(idx), rt::amax(idx)}).to_vector<int64_t>();
    if (range[0] < -size) throw_out_of_bounds(range[0], dim, size);
    if (range[1] >= size) throw_out_of_bounds(range[1], dim, size);
  }
  const rt::Tensor zero = rt::scalar_to_tensor(int64_t(0));
  return rt::where(rt::lt(e, zero), rt::add(e, rt::scalar_to_tensor(size)), e);
}

// Broadcast, wrapped (negative -> positive), bounds-checked int64 indices and their shape.
rt::Shape normalise_indices(const rt::Tensor& view, std::vector<std::pair<int64_t, rt::Tensor>>& adv) {
  rt::Shape bshape;
  for (auto& [d, idx] : adv) bshape = rt::broadcast_shapes(bshape, idx.sizes(), "index");
  for (auto& [d, idx] : adv) {
    const int64_t size = view.size(d);
    if (view.is_cuda()) {
      idx = wrap_on_device(idx, bshape, d, size);
      continue;
    }
    rt::Tensor flat = rt::expand(idx.detach(), bshape).contiguous();
    const int64_t* p = flat.data_ptr<int64_t>();
    rt::Tensor fixed = rt::make_tensor(bshape, rt::kInt64);
    int64_t* q = fixed.data_ptr<int64_t>();
    for (int64_t i = 0; i < flat.numel(); ++i) {
      if (p[i] < -size || p[i] >= size) throw_out_of_bounds(p[i], d, size);
      q[i] = p[i] < 0 ? p[i] + size : p[i];
    }
    idx = fixed;
  }
  return bshape;
}

// Gathers `view` at the advanced indices (see Note [Indexing]).
rt::Tensor gather_advanced(const rt::Tensor& view, std::vector<std::pair<int64_t, rt::Tensor>> adv) {
  const rt::Shape bshape = normalise_indices(view, adv);
  if (adv.size() == 1) {
    const int64_t d = adv[0].first;
    rt::Tensor out = rt::index_select(view, d, rt::reshape(adv[0].second, {-1}));
    rt::Shape shape(view.sizes().begin(), view.sizes().begin() + d);
    shape.insert(shape.end(), bshape.begin(), bshape.end());
    shape.insert(shape.end(), view.sizes().begin() + d + 1, view.sizes().end());
    return rt::reshape(out, shape);
  }
  rt::Shape adv_dims, rest_dims, order;
  for (auto& a : adv) adv_dims.push_back(a.first);
  for (int64_t d = 0; d < view.dim(); ++d)
    if (std::find(adv_dims.begin(), adv_dims.end(), d) == adv_dims.end()) rest_dims.push_back(d);
  bool adjacent = true;
  for (size_t i = 1; i < adv_dims.size(); ++i) adjacent = adjacent && adv_dims[i] == adv_dims[i - 1] + 1;

  rt::Tensor linear;
  {
    rt::NoGradGuard no_grad;
    linear = adv.back().second;
    int64_t stride = view.size(adv.back().first);
    for (size_t i = adv.size() - 1; i-- > 0;) {
      linear = rt::add(linear, rt::mul(adv[i].second, rt::scalar_to_tensor(stride)));
      stride *= view.size(adv[i].first);
    }
    linear = rt::reshape(linear, {-1});
  }
  order = adv_dims;
  order.insert(order.end(), rest_dims.begin(), rest_dims.end());
  rt::Shape flat_shape{-1}, out_shape = bshape;
  for (int64_t d : rest_dims) {
    flat_shape.push_back(view.size(d));
    out_shape.push_back(view.size(d));
  }
  rt::Tensor flat = rt::reshape(rt::permute(view, order), flat_shape);
  rt::Tensor out = rt::reshape(rt::index_select(flat, 0, linear), out_shape);
  const int64_t first = adv_dims[0];
  if (!adjacent || first == 0) return out;
  // Move the index dims back to where the advanced dims were.
  const int64_t nb = int64_t(bshape.size());
  rt::Shape perm;
  for (int64_t i = 0; i < first; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = nb + first; i < out.dim(); ++i) perm.push_back(i);
  return rt::permute(out, perm);
}

// Storage offsets (in elements) of every element of `view`, as an int64 tensor of its shape.
rt::Tensor element_offsets(const rt::Tensor& view) {
  rt::NoGradGuard no_grad;
  rt::Tensor off = rt::full(view.sizes(), view.storage_offset(), rt::kInt64);
  for (int64_t d = 0; d < view.dim(); ++d) {
    rt::Shape shape(size_t(view.dim()), 1);
    shape[size_t(d)] = view.size(d);
    rt::Tensor steps = rt::mul(rt::arange(view.size(d), rt::TensorOptions(rt::kInt64)), rt::scalar_to_tensor(view.stride(d)));
    rt::add_(off, rt::reshape(steps, shape));
  }
  return off;
}

// Row-major positions of the elements of `view`, as an int64 tensor of its shape on its device.
rt::Tensor element_positions(const rt::Tensor& view) {
  rt::NoGradGuard no_grad;
  const auto opts = rt::TensorOptions(rt::kInt64).with_device(view.device());
  return rt::reshape(rt::arange(view.numel(), opts), view.sizes());
}

// view.flatten()[pos[i]] = src[i] on a GPU, the last i winning where positions repeat (as the
// CPU's loop). Integer sums find, for every element, whether it is written and by which i; the
// values are then copied (index_select), never added, so every bit pattern arrives unchanged.
void assign_on_device(const rt::Tensor& view, rt::Tensor pos, rt::Tensor src) {
  rt::NoGradGuard no_grad;
  pos = rt::reshape(pos, {-1});
  src = rt::reshape(src, {-1});
  if (pos.numel() == 0) return;
  const rt::Device device = view.device();
  const auto i64 = rt::TensorOptions(rt::kInt64).with_device(device);
  const int64_t m = view.numel();
  const rt::Tensor hits = rt::scatter_add(rt::zeros({m}, i64), 0, pos, rt::ones({pos.numel()}, i64));
  if (pos.numel() > 1 && hits.amax().item<int64_t>() > 1) {
    const std::vector<int64_t> p = pos.to_vector<int64_t>();
    std::unordered_set<int64_t> seen;
    std::vector<int64_t> keep;
    for (size_t i = p.size(); i-- > 0;)
      if (seen.insert(p[i]).second) keep.push_back(int64_t(i));
    std::reverse(keep.begin(), keep.end());
    const rt::Tensor kept = rt::from_vector(keep).to(device);
    pos = rt::index_select(pos, 0, kept);
    src = rt::index_select(src, 0, kept);
  }
  const rt::Tensor writer = rt::scatter_add(rt::zeros({m}, i64), 0, pos, rt::arange(pos.numel(), i64));
  const rt::Tensor hit = rt::gt(hits, rt::scalar_to_tensor(int64_t(0)));
  const rt::Tensor merged = rt::where(hit, rt::index_select(src, 0, writer), rt::reshape(view, {-1}));
  rt::Tensor target = view;
  target.copy_(rt::reshape(merged, view.sizes()));
}

// x[mask] = number on a GPU with a bool mask of x's shape: masked_fill_ does it on the device.
bool is_whole_mask(const rt::Tensor& t, py::handle index) {
  if (!t.is_cuda() || !is_tensor(index)) return false;
  const rt::Tensor mask = unwrap(index);
  return mask.dtype() == rt::kBool && mask.dim() > 0 && mask.sizes() == t.sizes();
}

void refuse_autograd(const rt::Tensor& t, py::handle value) {
  if (rt::GradMode::is_enabled() && (t.requires_grad() || (is_tensor(value) && unwrap(value).requires_grad())))
    throw rt::NotImplementedError("assignment through advanced (tensor or mask) indices does not record autograd "
                                  "history; do it under rt.no_grad(), or build the result out of place with "
                                  "rt.where / masked_fill");
}

py::object getitem(py::handle self, py::handle index) {
  rt::Tensor t = unwrap(self);
  Indexed r = apply_basic(t, index);
  if (r.advanced.empty()) return wrap(r.view);
  return wrap(run_sized(r.view.numel(), [&] { return gather_advanced(r.view, std::move(r.advanced)); }));
}

void setitem(py::handle self, py::handle index, py::handle value) {
  rt::Tensor t = unwrap(self);
  auto scalar = is_tensor(value) ? std::nullopt : to_scalar(value);
  if (!is_tensor(value) && !scalar)
    throw py::type_error(fmt::format("can't assign a {} to a Tensor: use a number or a Tensor",
                                     Py_TYPE(value.ptr())->tp_name));
  if (scalar && is_whole_mask(t, index)) {
    refuse_autograd(t, value);
    rt::masked_fill_(t, unwrap(index).to(t.device()), *scalar);
    return;
  }
  Indexed r = apply_basic(t, index);
  if (r.advanced.empty()) {
    if (scalar) rt::fill_(r.view, *scalar);
    else rt::copy_(r.view, unwrap(value));
    return;
  }
  refuse_autograd(t, value);
  // Storage offsets on the CPU; on a GPU, positions in the view (see assign_on_device).
  const rt::Tensor where_to = t.is_cuda() ? element_positions(r.view) : element_offsets(r.view);
  rt::Tensor offsets = gather_advanced(where_to, std::move(r.advanced)).contiguous();
  rt::Tensor src = scalar ? rt::full(offsets.sizes(), *scalar, rt::TensorOptions(t.dtype()).with_device(t.device()))
                          : unwrap(value).detach();
  if (src.sizes() != offsets.sizes()) {
    rt::Shape b;
    try {
      b = rt::broadcast_shapes(offsets.sizes(), src.sizes(), "index_put_");
    } catch (const rt::ShapeError&) {
    }
    if (b != offsets.sizes())
      throw rt::ShapeError(fmt::format("shape mismatch: value tensor of shape {} cannot be broadcast to indexing "
                                       "result of shape {}", rt::format_shape(src.sizes()),
                                       rt::format_shape(offsets.sizes())));
    src = rt::expand(src, offsets.sizes());
  }
  src = src.to(t.dtype()).to(t.device()).contiguous();
  if (t.is_cuda()) return assign_on_device(r.view, offsets, src);
  const int64_t* off = offsets.data_ptr<int64_t>();
  const size_t es = t.element_size();
  char* base = static_cast<char*>(t.storage().data());
  const char* from = static_cast<const char*>(src.raw_data());
  for (int64_t i = 0; i < offsets.numel(); ++i) std::memcpy(base + off[i] * int64_t(es), from + i * int64_t(es), es);
  t.bump_version();
}
}  // namespace

void bind_indexing(py::module_& m) {
  TensorClass cls = tensor_class(m);
  cls.def("__getitem__", &getitem);
  cls.def("__setitem__", &setitem);
}

}  // namespace rtpy
