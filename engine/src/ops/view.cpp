// View ops: new sizes/strides/offset over the same storage, each with its backward.
#include "device_copy.h"
#include "rt/ops/view.h"

#include <algorithm>
#include <numeric>

#include "cpu/loops.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"

namespace rt {
using autograd::record;

namespace {

// Backward of a view that selects part of its input: scatter the gradient into zeros
// through the same view function.
template <typename ViewFn>
void record_partial_view(const char* name, const Tensor& in, const Tensor& out, ViewFn fn) {
  record(name, {in}, {out}, [shape = in.sizes(), dtype = in.dtype(), fn](const TensorList& g) {
    Tensor z = zeros(shape, TensorOptions(dtype).with_device(g[0].device()));
    Tensor part = fn(z);
    detail::copy_into(part, g[0]);
    return TensorList{z};
  });
}

// Sizes after resolving one -1 against numel; throws ShapeError naming op.
Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw_shape_error(op, "only one dimension can be inferred (-1), got shape " + format_shape(shape));
      infer = int64_t(i);
    } else if (out[i] < 0) {
      throw_shape_error(op, "invalid shape dimension " + std::to_string(out[i]) + " in " + format_shape(shape));
    } else {
      known *= out[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw_shape_error(op, "shape " + format_shape(shape) + " is invalid for input of size " + std::to_string(numel));
    out[size_t(infer)] = numel / known;
  } else if (known != numel) {
    throw_shape_error(op, "shape " + format_shape(shape) + " is invalid for input of size " + std::to_string(numel));
  }
  return out;
}

// Strides for viewing (sizes, strides) as `target` without copying, if possible
// (PyTorch's computeStride algorithm).
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& target) {
  if (sizes.empty()) return contiguous_strides(target);
  const int64_t numel = numel_of(sizes);
  if (numel == 0) return contiguous_strides(target);
  Shape out(target.size());
  int64_t view_d = int64_t(target.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[size_t(d)];
    if (d == 0 || (sizes[size_t(d - 1)] != 1 && strides[size_t(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || target[size_t(view_d)] == 1)) {
        out[size_t(view_d)] = view_numel * chunk_base_stride;
        view_numel *= target[size_t(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[size_t(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw_shape_error(op, "shapes " + format_shape(a) + " and " + format_shape(b) +
                                " cannot be broadcast: dimension " + std::to_string(i) + " (counting from the left of the "
                                "broadcast shape) is " + std::to_string(da) + " vs " + std::to_string(db),
                        "sizes must match or one of them must be 1; use unsqueeze/view to add dims");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor view(const Tensor& t, const Shape& shape) {
  OpGuard guard("view", t);
  Shape target = infer_size(shape, t.numel(), "view");
  auto st = view_strides(t.sizes(), t.strides(), target);
  if (!st)
    throw_shape_error("view", "view size " + format_shape(target) + " is not compatible with input tensor's size " +
                                  format_shape(t.sizes()) + " and stride " + format_shape(t.strides()) +
                                  " (at least one dimension spans across two contiguous subspaces)",
                      "use reshape() instead, or call contiguous() first");
  Tensor out = make_view(t, target, *st, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("ViewBackward0", {t}, {out}, [in = t.sizes()](const TensorList& g) { return TensorList{reshape(g[0], in)}; });
  return out;
}

Tensor reshape(const Tensor& t, const Shape& shape) {
  OpGuard guard("reshape", t);
  Shape target = infer_size(shape, t.numel(), "reshape");
  if (view_strides(t.sizes(), t.strides(), target)) return view(t, target);
  return view(contiguous(t), target);
}

Tensor permute(const Tensor& t, const Shape& dims) {
  OpGuard guard("permute", t);
  const int64_t nd = t.dim();
  if (int64_t(dims.size()) != nd)
    throw_shape_error("permute", "number of dims in " + format_shape(dims) + " doesn't match the tensor's " +
                                     std::to_string(nd) + " dims (shape " + format_shape(t.sizes()) + ")");
  Shape sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd)), inverse(static_cast<size_t>(nd));
  std::vector<bool> seen(size_t(nd), false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t d = wrap_dim(dims[size_t(i)], nd, "permute");
    if (seen[size_t(d)]) throw IndexError("permute: dimension " + std::to_string(d) + " repeats in " + format_shape(dims));
    seen[size_t(d)] = true;
    sizes[size_t(i)] = t.sizes()[size_t(d)];
    strides[size_t(i)] = t.strides()[size_t(d)];
    inverse[size_t(d)] = i;
  }
  Tensor out = make_view(t, sizes, strides, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("PermuteBackward0", {t}, {out}, [inverse](const TensorList& g) { return TensorList{permute(g[0], inverse)}; });
  return out;
}

Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) {
  OpGuard guard("transpose", t);
  const int64_t nd = t.dim();
  if (nd == 0) return view(t, {});
  d0 = wrap_dim(d0, nd, "transpose");
  d1 = wrap_dim(d1, nd, "transpose");
  Shape sizes = t.sizes(), strides = t.strides();
  std::swap(sizes[size_t(d0)], sizes[size_t(d1)]);
  std::swap(strides[size_t(d0)], strides[size_t(d1)]);
  Tensor out = make_view(t, sizes, strides, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("TransposeBackward0", {t}, {out}, [d0, d1](const TensorList& g) { return TensorList{transpose(g[0], d0, d1)}; });
  return out;
}

Tensor squeeze(const Tensor& t, std::optional<int64_t> d) {
  OpGuard guard("squeeze", t);
  Shape sizes, strides;
  const int64_t nd = t.dim();
  const int64_t only = d ? wrap_dim(*d, nd, "squeeze") : -1;
  for (int64_t i = 0; i < nd; ++i) {
    const bool drop = t.sizes()[size_t(i)] == 1 && (only < 0 || i == only);
    if (drop) continue;
    sizes.push_back(t.sizes()[size_t(i)]);
    strides.push_back(t.strides()[size_t(i)]);
  }
  Tensor out = make_view(t, sizes, strides, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("SqueezeBackward0", {t}, {out}, [in = t.sizes()](const TensorList& g) { return TensorList{reshape(g[0], in)}; });
  return out;
}

Tensor unsqueeze(const Tensor& t, int64_t d) {
  OpGuard guard("unsqueeze", t);
  const int64_t nd = t.dim();
  d = wrap_dim(d, nd + 1, "unsqueeze");
  Shape sizes = t.sizes(), strides = t.strides();
  const int64_t st = d < nd ? sizes[size_t(d)] * strides[size_t(d)] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  Tensor out = make_view(t, sizes, strides, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("UnsqueezeBackward0", {t}, {out}, [d](const TensorList& g) { return TensorList{squeeze(g[0], d)}; });
  return out;
}

Tensor expand(const Tensor& t, const Shape& shape) {
  OpGuard guard("expand", t);
  const int64_t nd = int64_t(shape.size()), td = t.dim();
  if (nd < td)
    throw_shape_error("expand", "the number of sizes provided (" + std::to_string(nd) +
                                    ") must be greater or equal to the number of dimensions in the tensor (" +
                                    std::to_string(td) + "), shape " + format_shape(t.sizes()));
  Shape sizes(static_cast<size_t>(nd)), strides(static_cast<size_t>(nd));
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t ti = i - (nd - td);
    const int64_t want = shape[size_t(i)];
    if (ti < 0) {
      if (want < 0) throw_shape_error("expand", "-1 is not allowed in a leading, non-existing dimension");
      sizes[size_t(i)] = want;
      strides[size_t(i)] = 0;
      continue;
    }
    const int64_t have = t.sizes()[size_t(ti)];
    if (want == -1 || want == have) {
      sizes[size_t(i)] = have;
      strides[size_t(i)] = t.strides()[size_t(ti)];
    } else if (have == 1) {
      sizes[size_t(i)] = want;
      strides[size_t(i)] = 0;
    } else {
      throw_shape_error("expand", "the expanded size of the tensor (" + std::to_string(want) +
                                      ") must match the existing size (" + std::to_string(have) +
                                      ") at non-singleton dimension " + std::to_string(i) + ". Target sizes: " +
                                      format_shape(shape) + ". Tensor sizes: " + format_shape(t.sizes()));
    }
  }
  Tensor out = make_view(t, sizes, strides, t.storage_offset());
  if (autograd::any_requires_grad(t))
    record("ExpandBackward0", {t}, {out}, [in = t.sizes()](const TensorList& g) { return TensorList{autograd::sum_to(g[0], in)}; });
  return out;
}

Tensor slice(const Tensor& t, int64_t d, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt, int64_t step) {
  OpGuard guard("slice", t);
  d = wrap_dim(d, t.dim(), "slice");
  if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
  const int64_t n = t.sizes()[size_t(d)];
  int64_t start = start_opt.value_or(0), end = end_opt.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sizes = t.sizes(), strides = t.strides();
  sizes[size_t(d)] = (end - start + step - 1) / step;
  strides[size_t(d)] *= step;
  Tensor out = make_view(t, sizes, strides, t.storage_offset() + start * t.strides()[size_t(d)]);
  if (autograd::any_requires_grad(t))
    record_partial_view("SliceBackward0", t, out, [d, start, end, step](const Tensor& z) { return slice(z, d, start, end, step); });
  return out;
}

Tensor narrow(const Tensor& t, int64_t d, int64_t start, int64_t length) {
  OpGuard guard("narrow", t);
  d = wrap_dim(d, t.dim(), "narrow");
  const int64_t n = t.sizes()[size_t(d)];
  if (start < 0) start += n;
  if (start < 0 || length < 0 || start + length > n)
    throw IndexError("narrow: start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
                     ") exceeds dimension size (" + std::to_string(n) + ") of dim " + std::to_string(d));
  return slice(t, d, start, start + length, 1);
}

Tensor select(const Tensor& t, int64_t d, int64_t index) {
  OpGuard guard("select", t);
  d = wrap_dim(d, t.dim(), "select");
  const int64_t n = t.sizes()[size_t(d)];
  const int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw IndexError("select: index " + std::to_string(index) + " is out of bounds for dimension " + std::to_string(d) +
                     " with size " + std::to_string(n));
  Shape sizes = t.sizes(), strides = t.strides();
  const int64_t offset = t.storage_offset() + i * strides[size_t(d)];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(t, sizes, strides, offset);
  if (autograd::any_requires_grad(t))
    record_partial_view("SelectBackward0", t, out, [d, i](const Tensor& z) { return select(z, d, i); });
  return out;
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  if (t.dim() == 0) return reshape(t, {1});
  start_dim = wrap_dim(start_dim, t.dim(), "flatten");
  end_dim = wrap_dim(end_dim, t.dim(), "flatten");
  if (start_dim > end_dim) throw ValueError("flatten: start_dim cannot come after end_dim");
  Shape shape(t.sizes().begin(), t.sizes().begin() + start_dim);
  int64_t n = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) n *= t.sizes()[size_t(i)];
  shape.push_back(n);
  shape.insert(shape.end(), t.sizes().begin() + end_dim + 1, t.sizes().end());
  return reshape(t, shape);
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  return clone(t);
}

Tensor clone(const Tensor& t) {
  OpGuard guard("clone", t);
  Tensor out = make_tensor(t.sizes(), t.dtype(), t.device());
  detail::copy_into(out, t);
  if (autograd::any_requires_grad(t))
    record("CloneBackward0", {t}, {out}, [](const TensorList& g) { return TensorList{g[0]}; });
  return out;
}

Tensor to_dtype(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  OpGuard guard("to", t);
  Tensor out = make_tensor(t.sizes(), dtype, t.device());
  detail::copy_into(out, t);
  if (is_floating(dtype) && autograd::any_requires_grad(t))
    record("ToCopyBackward0", {t}, {out}, [src = t.dtype()](const TensorList& g) { return TensorList{to_dtype(g[0], src)}; });
  return out;
}

Tensor to_device(const Tensor& t, Device device, bool non_blocking) {
  if (t.device() == device) return t;
  OpGuard guard("to", t);
  Tensor out = make_tensor(t.sizes(), t.dtype(), device);
  if (non_blocking) cuda::detail::copy(out, t, /*non_blocking=*/true);
  else detail::copy_into(out, t);
  if (autograd::any_requires_grad(t))
    record("ToCopyBackward0", {t}, {out}, [src = t.device()](const TensorList& g) { return TensorList{to_device(g[0], src)}; });
  return out;
}

Tensor detach(const Tensor& t) {
  Tensor out = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  out.impl().is_view = t.impl().is_view;
  return out;
}

// ---- Tensor methods ---------------------------------------------------------------------
Tensor Tensor::view(const Shape& s) const { return rt::view(*this, s); }
Tensor Tensor::reshape(const Shape& s) const { return rt::reshape(*this, s); }
Tensor Tensor::permute(const Shape& d) const { return rt::permute(*this, d); }
Tensor Tensor::transpose(int64_t a, int64_t b) const { return rt::transpose(*this, a, b); }
Tensor Tensor::t() const {
  if (dim() > 2) throw_shape_error("t", "expects a tensor with <= 2 dimensions, but got " + std::to_string(dim()) + " (shape " + format_shape(sizes()) + ")", "use transpose(-2, -1) or mT for batches");
  return dim() < 2 ? rt::view(*this, sizes()) : rt::transpose(*this, 0, 1);
}
Tensor Tensor::squeeze() const { return rt::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return rt::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const { return rt::unsqueeze(*this, d); }
Tensor Tensor::expand(const Shape& s) const { return rt::expand(*this, s); }
Tensor Tensor::expand_as(const Tensor& o) const { return rt::expand(*this, o.sizes()); }
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const { return rt::narrow(*this, d, s, l); }
Tensor Tensor::slice(int64_t d, std::optional<int64_t> s, std::optional<int64_t> e, int64_t st) const { return rt::slice(*this, d, s, e, st); }
Tensor Tensor::select(int64_t d, int64_t i) const { return rt::select(*this, d, i); }
Tensor Tensor::flatten(int64_t s, int64_t e) const { return rt::flatten(*this, s, e); }
Tensor Tensor::unflatten(int64_t d, const Shape& s) const {
  d = wrap_dim(d, dim(), "unflatten");
  Shape shape(sizes().begin(), sizes().begin() + d);
  shape.insert(shape.end(), s.begin(), s.end());
  shape.insert(shape.end(), sizes().begin() + d + 1, sizes().end());
  return rt::view(*this, shape);
}
Tensor Tensor::contiguous() const { return rt::contiguous(*this); }
Tensor Tensor::clone() const { return rt::clone(*this); }
Tensor Tensor::to(ScalarType d) const { return rt::to_dtype(*this, d); }
Tensor Tensor::to(Device d) const { return rt::to_device(*this, d); }

}  // namespace rt
