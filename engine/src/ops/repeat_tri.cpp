// repeat, tril, triu.
#include <algorithm>
#include <cstring>

#include "device_copy.h"
#include "cpu/loops.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;

Tensor repeat(const Tensor& t, const Shape& repeats) {
  OpGuard guard("repeat", t);
  const int64_t nr = int64_t(repeats.size()), nd = t.dim();
  if (nr < nd)
    throw_shape_error("repeat", "number of repeat dims (" + std::to_string(nr) + ", " + format_shape(repeats) +
                                    ") can not be smaller than the number of dimensions of the tensor (" +
                                    std::to_string(nd) + ", shape " + format_shape(t.sizes()) + ")",
                      "give one repeat count per dimension; extra leading counts add new dimensions");
  for (int64_t r : repeats)
    if (r < 0) throw ValueError("repeat: repeats cannot be negative, got " + format_shape(repeats));
  Shape padded(size_t(nr - nd), 1), pstrides(size_t(nr - nd), 0);
  Shape out_shape(static_cast<size_t>(nr));
  padded.insert(padded.end(), t.sizes().begin(), t.sizes().end());
  pstrides.insert(pstrides.end(), t.strides().begin(), t.strides().end());
  for (size_t k = 0; k < size_t(nr); ++k) out_shape[k] = padded[k] * repeats[k];
  Tensor out = make_tensor(out_shape, t.dtype(), t.device());
  // out viewed as [r0, s0, r1, s1, ...]; the source broadcasts over the r dims.
  Shape tiled, dst_strides, src_strides;
  const Shape& os = out.strides();
  for (size_t k = 0; k < size_t(nr); ++k) {
    tiled.insert(tiled.end(), {repeats[k], padded[k]});
    dst_strides.insert(dst_strides.end(), {padded[k] * os[k], os[k]});
    src_strides.insert(src_strides.end(), {0, pstrides[k]});
  }
  if (out.numel() > 0) {
    Shape sizes, dst, src;  // size-1 dims dropped so deep tensors stay within the loop's rank limit
    for (size_t k = 0; k < tiled.size(); ++k) {
      if (tiled[k] == 1) continue;
      sizes.push_back(tiled[k]);
      dst.push_back(dst_strides[k]);
      src.push_back(src_strides[k]);
    }
    detail::copy_into(make_view(out, sizes, dst, 0), make_view(t, sizes, src, t.storage_offset()));
  }
  if (autograd::any_requires_grad(t))
    record("RepeatBackward0", {t}, {out}, [tiled, in = t.sizes()](const TensorList& g) {
      if (tiled.empty()) return TensorList{g[0]};
      Shape tile_dims;
      for (size_t k = 0; k < tiled.size(); k += 2) tile_dims.push_back(int64_t(k));
      return TensorList{reshape(sum(reshape(g[0], tiled), tile_dims), in)};
    });
  return out;
}

namespace {

Tensor triangle(const Tensor& t, int64_t k, bool lower, const char* op) {
  OpGuard guard(op, t);
  if (t.dim() < 2)
    throw_shape_error(op, "input tensor must have at least 2 dimensions, got shape " + format_shape(t.sizes()),
                      "unsqueeze a vector to a [1, n] or [n, 1] matrix first");
  const int64_t R = t.sizes()[size_t(t.dim() - 2)], C = t.sizes()[size_t(t.dim() - 1)];
  if (!t.is_cpu()) {  // a [R, C] keep-mask made on the host, applied with where (which records the backward)
    const Tensor diff = sub(arange(C).view({1, C}), arange(R).view({R, 1}));  // column - row
    const Tensor keep = lower ? le(diff, scalar_to_tensor(k)) : ge(diff, scalar_to_tensor(k));
    return where(keep.to(t.device()), t, zeros({}, TensorOptions(t.dtype()).with_device(t.device())));
  }
  Tensor src = t;
  if (!t.is_contiguous()) {
    src = make_tensor(t.sizes(), t.dtype(), t.device());
    detail::copy_into(src, t);
  }
  Tensor out = make_tensor(t.sizes(), t.dtype(), t.device());
  const int64_t rows = C == 0 ? 0 : t.numel() / C;
  const int64_t kk = std::clamp<int64_t>(k, -R - 1, C + 1);  // same mask, no overflow below
  const size_t es = t.element_size();
  const char* s = static_cast<const char*>(src.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  auto row = [&](int64_t r) {
    const int64_t i = r % R;
    // kept columns: tril j <= i + k, triu j >= i + k
    const int64_t lo = lower ? 0 : std::clamp<int64_t>(i + kk, 0, C);
    const int64_t hi = lower ? std::clamp<int64_t>(i + kk + 1, 0, C) : C;
    const size_t base = size_t(r * C) * es;
    std::memset(o + base, 0, size_t(lo) * es);
    std::memcpy(o + base + size_t(lo) * es, s + base + size_t(lo) * es, size_t(hi - lo) * es);
    std::memset(o + base + size_t(hi) * es, 0, size_t(C - hi) * es);
  };
  if (rows > 1 && rows * C >= cpu::kParallelGrain && cpu::num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) row(r);
  } else {
    for (int64_t r = 0; r < rows; ++r) row(r);
  }
  if (autograd::any_requires_grad(t))
    record(lower ? "TrilBackward0" : "TriuBackward0", {t}, {out}, [k, lower](const TensorList& g) {
      return TensorList{lower ? tril(g[0], k) : triu(g[0], k)};
    });
  return out;
}

}  // namespace

Tensor tril(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, true, "tril"); }
Tensor triu(const Tensor& t, int64_t diagonal) { return triangle(t, diagonal, false, "triu"); }

}  // namespace rt
