// nonzero, argwhere, masked_select, take and take_along_dim. See the contract in rt/ops/select.h.
#include <string>
#include <vector>

#include "dim_rows.h"
#include "op_device.h"
#include "rt/autograd/grad_mode.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/select.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt {
using detail::DimRows;
using detail::for_each_row;
using autograd::record;
using autograd::SavedTensor;

namespace {

// Row-major positions of the elements of contiguous CPU x that are not zero: [count, ndim].
Tensor nonzero_cpu(const Tensor& x) {
  const int64_t n = x.numel(), nd = x.dim();
  std::vector<int64_t> flat;
  visit_dtype(x.dtype(), [&]<typename T>() {
    const T* p = static_cast<const T*>(x.raw_data());
    for (int64_t i = 0; i < n; ++i)
      if (compute_t<T>(p[i]) != compute_t<T>(0)) flat.push_back(i);
  });
  Tensor out = make_tensor({int64_t(flat.size()), nd}, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  const Shape& sizes = x.sizes();
  for (size_t k = 0; k < flat.size(); ++k) {
    int64_t rest = flat[k];
    for (int64_t d = nd - 1; d >= 0; --d) {
      o[int64_t(k) * nd + d] = rest % sizes[size_t(d)];
      rest /= sizes[size_t(d)];
    }
  }
  return out;
}

void check_long_index(const char* op, const Tensor& index, const char* what) {
  if (index.dtype() == kInt64) return;
  throw DTypeError(std::string(op) + ": expected " + what + " of dtype int64, got " +
                   std::string(dtype_name(index.dtype())) + " " + format_shape(index.sizes()) + module_context() +
                   ". Hint: convert it with .to(rt::kInt64)");
}

// Flat positions (1-D int64, on mask's device) of the true elements of a contiguous bool mask.
Tensor true_positions(const Tensor& mask) {
  const Tensor rows = nonzero(reshape(mask, {-1}));
  return reshape(rows, {-1});
}

}  // namespace

Tensor nonzero(const Tensor& t) {
  OpGuard guard("nonzero", t);
  // A GPU tensor is read on the host: the result's size depends on its values (PyTorch syncs too).
  const Tensor positions = nonzero_cpu(detail::dense_cpu(t, t.dtype()));
  return t.device().is_cpu() ? positions : positions.to(t.device());
}

TensorList nonzero_tuple(const Tensor& t) {
  const Tensor positions = nonzero(t);
  // A 0-dim tensor answers as a 1-element vector would: position 0, or none.
  if (t.dim() == 0) return {zeros({positions.size(0)}, TensorOptions(kInt64).with_device(positions.device()))};
  TensorList columns;
  for (int64_t d = 0; d < t.dim(); ++d) columns.push_back(select(positions, 1, d));
  return columns;
}

Tensor argwhere(const Tensor& t) { return nonzero(t); }

Tensor masked_select(const Tensor& t, const Tensor& mask) {
  OpGuard guard("masked_select", t, mask);
  if (mask.dtype() != kBool && mask.dtype() != kUInt8)
    throw DTypeError("masked_select: expected a bool mask, got " + std::string(dtype_name(mask.dtype())) + " " +
                     format_shape(mask.sizes()) + " (input " + format_shape(t.sizes()) + ")" + module_context() +
                     ". Hint: build the mask with a comparison, e.g. x.gt(0), or convert it with .to(rt::kBool)");
  const Device device = detail::op_device("masked_select", t, mask);
  const Shape shape = t.sizes() == mask.sizes() ? t.sizes() : broadcast_shapes(t.sizes(), mask.sizes(), "masked_select");
  Tensor positions, values;
  {
    NoGradGuard no_grad;
    positions = true_positions(expand(mask.to(kBool).to(device), shape).contiguous());
    values = index_select(reshape(expand(t.to(device), shape), {-1}), 0, positions);
  }
  if (autograd::any_requires_grad(t))
    record("MaskedSelectBackward0", {t}, {values}, [sp = SavedTensor(positions), shape, sizes = t.sizes()](const TensorList& g) {
      const Tensor flat = zeros({numel_of(shape)}, TensorOptions(g[0].dtype()).with_device(g[0].device()));
      return TensorList{autograd::sum_to(reshape(scatter_add(flat, 0, sp.unpack(), g[0]), shape), sizes)};
    });
  return values;
}

Tensor take(const Tensor& t, const Tensor& index) {
  OpGuard guard("take", t, index);
  check_long_index("take", index, "an index");
  detail::op_device("take", t, index);
  const int64_t n = t.numel();
  Tensor flat_index;
  {
    NoGradGuard no_grad;
    flat_index = reshape(index, {-1});
    if (flat_index.numel() > 0) {
      const int64_t lo = min(flat_index).item<int64_t>(), hi = max(flat_index).item<int64_t>();
      if (lo < -n || hi >= n) {
        const int64_t bad = lo < -n ? lo : hi;
        throw IndexError("take: index " + std::to_string(bad) + " is out of range for a tensor of " +
                         std::to_string(n) + " elements (input " + format_shape(t.sizes()) + ", index " +
                         format_shape(index.sizes()) + ")" + module_context() + ". Hint: valid indices are " +
                         (n > 0 ? std::to_string(-n) + ".." + std::to_string(n - 1) : std::string("none")) +
                         "; negative ones count from the end");
      }
      flat_index = remainder(flat_index, Scalar(n));
    }
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    out = reshape(index_select(reshape(t, {-1}), 0, flat_index.to(t.device())), index.sizes());
  }
  if (autograd::any_requires_grad(t))
    record("TakeBackward0", {t}, {out}, [si = SavedTensor(flat_index), sizes = t.sizes(), n](const TensorList& g) {
      const Tensor flat = zeros({n}, TensorOptions(g[0].dtype()).with_device(g[0].device()));
      return TensorList{reshape(scatter_add(flat, 0, si.unpack(), reshape(g[0], {-1})), sizes)};
    });
  return out;
}

Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim) {
  OpGuard guard("take_along_dim", t, indices);
  check_long_index("take_along_dim", indices, "indices");
  if (!dim) return gather(reshape(t, {-1}), 0, reshape(indices, {-1}));
  if (t.dim() != indices.dim())
    throw_shape_error("take_along_dim",
                      "input and indices should have the same number of dimensions, but got " +
                          std::to_string(t.dim()) + " for input " + format_shape(t.sizes()) + " and " +
                          std::to_string(indices.dim()) + " for indices " + format_shape(indices.sizes()),
                      "unsqueeze the indices so they have one dimension per dimension of the input");
  const int64_t d = wrap_dim(*dim, t.dim(), "take_along_dim");
  if (t.dim() == 0) return gather(t, d, indices);
  // Every dim but d broadcasts; along d the input keeps its size and the indices theirs.
  Shape t_one = t.sizes(), i_one = indices.sizes();
  t_one[size_t(d)] = 1;
  i_one[size_t(d)] = 1;
  Shape t_shape = broadcast_shapes(t_one, i_one, "take_along_dim"), i_shape = t_shape;
  t_shape[size_t(d)] = t.size(d);
  i_shape[size_t(d)] = indices.size(d);
  return gather(expand(t, t_shape), d, expand(indices, i_shape));
}

}  // namespace rt
