// cat, stack, split, chunk.
#include <algorithm>
#include <cstring>

#include "../amp/autocast_policy.h"
#include "device_copy.h"
#include "op_device.h"
#include "cpu/loops.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;

namespace {

// PyTorch's legacy rule: 1-D empty tensors take no part in cat's shape checks.
bool skipped_by_cat(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

std::string shapes_of(const TensorList& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + format_shape(ts[i].sizes());
  return s;
}

void check_list(const TensorList& ts, const char* op) {
  if (ts.empty()) throw ValueError(std::string(op) + ": expected a non-empty list of tensors");
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].defined())
      throw ValueError(std::string(op) + ": tensor " + std::to_string(i) + " in the list is undefined");
    if (ts[i].device() != ts[0].device()) detail::throw_device_mismatch(op, ts[0], 0, ts[i], i);
  }
}

ScalarType promoted_dtype(const TensorList& ts) {
  ScalarType dt = ts[0].dtype();
  for (const Tensor& t : ts) dt = promote_types(dt, t.dtype());
  return dt;
}

// Copies `rows` blocks of `block` bytes from src (packed) to dst (rows `dst_stride` bytes apart).
void copy_blocks(char* dst, int64_t dst_stride, const char* src, int64_t block, int64_t rows) {
  auto range = [&](int64_t b, int64_t e) {
    while (b < e) {
      const int64_t r = b / block, w = b % block, n = std::min(block - w, e - b);
      std::memcpy(dst + r * dst_stride + w, src + b, size_t(n));
      b += n;
    }
  };
  const int64_t total = block * rows, grain = cpu::kParallelGrain * 8;
  if (total < grain || cpu::num_threads() <= 1) {
    range(0, total);
    return;
  }
  const int64_t chunks = std::min<int64_t>(cpu::num_threads(), total / grain + 1);
#pragma omp parallel for num_threads(int(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) range(total * c / chunks, total * (c + 1) / chunks);
}

// Writes parts (out's shape except in `dim`) one after another along `dim` of contiguous out.
void cat_into(const Tensor& out, const TensorList& parts, int64_t dim) {
  const Shape& os = out.sizes();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= os[size_t(d)];
  for (size_t d = size_t(dim) + 1; d < os.size(); ++d) inner *= os[d];
  const int64_t es = int64_t(out.element_size());
  // raw_data() is for host memory only (it throws for a GPU tensor); other devices copy through views.
  char* base = out.device().is_cpu() ? static_cast<char*>(out.raw_data()) : nullptr;
  int64_t at = 0;
  for (const Tensor& p : parts) {
    const int64_t n = p.sizes()[size_t(dim)];
    if (n * inner * outer > 0) {
      if (base && p.dtype() == out.dtype() && p.is_contiguous() && p.device().is_cpu()) {
        copy_blocks(base + at * inner * es, os[size_t(dim)] * inner * es, static_cast<const char*>(p.raw_data()),
                    n * inner * es, outer);
      } else {
        Shape sizes = os;
        sizes[size_t(dim)] = n;
        detail::copy_into(make_view(out, sizes, out.strides(), at * inner), p);
      }
    }
    at += n;
  }
}

// Note [Split backward]
// The pieces of split, split_with_sizes and chunk are views of the input made without autograd, and one node
// (SplitBackward0 or SplitWithSizesBackward0, PyTorch's names) takes all of their gradients: its backward is a
// single cat along the split dim, where the engine has filled a piece that got no gradient with zeros of the
// piece's size. One node per piece (a narrow's backward) would allocate and zero a tensor of the whole input's
// size for every piece, and the engine would then sum those k full-size tensors.
TensorList record_split(const Tensor& t, TensorList pieces, int64_t dim, const char* node) {
  if (autograd::any_requires_grad(t))
    autograd::record(node, {t}, pieces, [dim](const TensorList& g) { return TensorList{cat(g, dim)}; });
  return pieces;
}

TensorList split_impl(const Tensor& t, int64_t split_size, int64_t dim, const char* op) {
  const int64_t n = t.sizes()[size_t(dim)];
  if (split_size < 0)
    throw ValueError(std::string(op) + ": split_size must be non-negative, got " + std::to_string(split_size));
  if (split_size == 0 && n != 0)
    throw ValueError(std::string(op) + ": split_size can only be 0 if the dimension size is 0, but dimension " +
                     std::to_string(dim) + " of shape " + format_shape(t.sizes()) + " has size " + std::to_string(n));
  const int64_t pieces = split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
  TensorList out;
  out.reserve(size_t(pieces));
  {
    NoGradGuard views_only;  // Note [Split backward]
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t start = i * split_size;
      out.push_back(narrow(t, dim, start, std::min(split_size, n - start)));
    }
  }
  return record_split(t, std::move(out), dim, "SplitBackward0");
}

TensorList split_sizes_impl(const Tensor& t, const Shape& sizes, int64_t dim, const char* op) {
  const int64_t n = t.sizes()[size_t(dim)];
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw ValueError(std::string(op) + ": split sizes must be non-negative, got " + format_shape(sizes));
    total += s;
  }
  if (total != n)
    throw_shape_error(op, "split sizes " + format_shape(sizes) + " sum to " + std::to_string(total) +
                              " but dimension " + std::to_string(dim) + " of shape " + format_shape(t.sizes()) +
                              " has size " + std::to_string(n),
                      "the sizes must add up exactly to the size of the split dimension");
  TensorList out;
  out.reserve(sizes.size());
  {
    NoGradGuard views_only;  // Note [Split backward]
    int64_t start = 0;
    for (int64_t s : sizes) {
      out.push_back(narrow(t, dim, start, s));
      start += s;
    }
  }
  return record_split(t, std::move(out), dim, "SplitWithSizesBackward0");
}

int64_t split_dim(const Tensor& t, int64_t dim, const char* op) {
  if (t.dim() == 0)
    throw_shape_error(op, "expects at least a 1-dimensional tensor, got a 0-dim tensor (shape [])",
                      "unsqueeze(0) the tensor first");
  return wrap_dim(dim, t.dim(), op);
}

}  // namespace

Tensor cat(const TensorList& tensors, int64_t dim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Promote, tensors); ac) return cat(ac.tensors(), dim);
  OpGuard guard("cat", tensors);
  check_list(tensors, "cat");
  const ScalarType dt = promoted_dtype(tensors);
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0)
      throw_shape_error("cat", "zero-dimensional tensor (at position " + std::to_string(i) +
                                   ") cannot be concatenated; shapes: " + shapes_of(tensors),
                        "use stack() to join scalars, or unsqueeze(0) them first");
    if (!ref && !skipped_by_cat(tensors[i])) ref = &tensors[i];
  }
  if (!ref) return make_tensor({0}, dt);  // every input is a skipped 1-D empty tensor
  const int64_t nd = ref->dim();
  dim = wrap_dim(dim, nd, "cat");
  TensorList parts;
  Shape out_shape = ref->sizes();
  out_shape[size_t(dim)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_by_cat(t)) continue;
    if (t.dim() != nd)
      throw_shape_error("cat", "tensors must have the same number of dimensions: got " + std::to_string(nd) +
                                   " and " + std::to_string(t.dim()) + " (tensor " + std::to_string(i) +
                                   "); shapes: " + shapes_of(tensors));
    for (int64_t d = 0; d < nd; ++d) {
      if (d == dim || t.sizes()[size_t(d)] == ref->sizes()[size_t(d)]) continue;
      throw_shape_error("cat", "sizes of tensors must match except in dimension " + std::to_string(dim) +
                                   ": expected size " + std::to_string(ref->sizes()[size_t(d)]) + " but got size " +
                                   std::to_string(t.sizes()[size_t(d)]) + " in dimension " + std::to_string(d) +
                                   " for tensor " + std::to_string(i) + " of shape " + format_shape(t.sizes()) +
                                   "; shapes: " + shapes_of(tensors),
                        "only the concatenation dimension may differ; did you mean dim=" + std::to_string(d) + "?");
    }
    out_shape[size_t(dim)] += t.sizes()[size_t(dim)];
    parts.push_back(t);
  }
  Tensor out = make_tensor(out_shape, dt, ref->device());
  cat_into(out, parts, dim);
  if (autograd::any_requires_grad(tensors)) {
    std::vector<int64_t> lengths;  // -1: skipped
    std::vector<bool> needed;
    for (const Tensor& t : tensors) {
      lengths.push_back(skipped_by_cat(t) ? -1 : t.sizes()[size_t(dim)]);
      needed.push_back(t.requires_grad());
    }
    record("CatBackward0", tensors, {out}, [dim, lengths, needed](const TensorList& g) {
      TensorList r(lengths.size());
      int64_t at = 0;
      for (size_t i = 0; i < lengths.size(); ++i) {
        if (lengths[i] < 0) {
          if (needed[i]) r[i] = zeros({0}, TensorOptions(g[0].dtype()).with_device(g[0].device()));
          continue;
        }
        if (needed[i]) r[i] = narrow(g[0], dim, at, lengths[i]);
        at += lengths[i];
      }
      return r;
    });
  }
  return out;
}

Tensor stack(const TensorList& tensors, int64_t dim) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Promote, tensors); ac) return stack(ac.tensors(), dim);
  OpGuard guard("stack", tensors);
  check_list(tensors, "stack");
  const Shape& s0 = tensors[0].sizes();
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.sizes() != s0)
      throw_shape_error("stack", "expects each tensor to be equal size, but got " + format_shape(s0) +
                                     " at entry 0 and " + format_shape(t.sizes()) + " at entry " + std::to_string(i),
                        "use cat() to join tensors of different sizes, or pad them to one shape first");
    Shape sizes = t.sizes(), strides = t.strides();
    sizes.insert(sizes.begin() + dim, 1);
    strides.insert(strides.begin() + dim, 1);
    parts.push_back(make_view(t, sizes, strides, t.storage_offset()));
  }
  Shape out_shape = s0;
  out_shape.insert(out_shape.begin() + dim, int64_t(tensors.size()));
  Tensor out = make_tensor(out_shape, promoted_dtype(tensors), tensors[0].device());
  cat_into(out, parts, dim);
  if (autograd::any_requires_grad(tensors)) {
    std::vector<bool> needed;
    for (const Tensor& t : tensors) needed.push_back(t.requires_grad());
    record("StackBackward0", tensors, {out}, [dim, needed](const TensorList& g) {
      TensorList r(needed.size());
      for (size_t i = 0; i < needed.size(); ++i)
        if (needed[i]) r[i] = select(g[0], dim, int64_t(i));
      return r;
    });
  }
  return out;
}

TensorList split(const Tensor& t, int64_t split_size, int64_t dim) {
  OpGuard guard("split", t);
  return split_impl(t, split_size, split_dim(t, dim, "split"), "split");
}

TensorList split(const Tensor& t, const Shape& sizes, int64_t dim) {
  OpGuard guard("split_with_sizes", t);
  return split_sizes_impl(t, sizes, split_dim(t, dim, "split_with_sizes"), "split_with_sizes");
}

TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim) {
  OpGuard guard("chunk", t);
  dim = split_dim(t, dim, "chunk");
  if (chunks <= 0) throw ValueError("chunk: expected chunks to be greater than 0, got " + std::to_string(chunks));
  const int64_t n = t.sizes()[size_t(dim)];
  const int64_t split_size = (n + chunks - 1) / chunks;
  // With a 0-size dim, split would return one piece; PyTorch keeps `chunks` empty pieces.
  if (n == 0) return split_sizes_impl(t, Shape(size_t(chunks), 0), dim, "chunk");
  return split_impl(t, split_size, dim, "chunk");
}

}  // namespace rt
