// gather, scatter_add, index_select (with the index_add its backward needs), one_hot.
// On a GPU the same checks run here and the device's kernels (dispatch_stubs.h) do the
// work; they check the index range on the device (the index is never copied to the host).
#include <algorithm>
#include <cstring>

#include "../amp/autocast_policy.h"
#include "dispatch_stubs.h"
#include "device_copy.h"
#include "op_device.h"
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
using autograd::SavedTensor;

namespace {

template <typename F>
void parallel_for(int64_t count, int64_t work_each, F&& fn) {
  if (count > 1 && count * work_each >= cpu::kParallelGrain && cpu::num_threads() > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i) fn(i);
  } else {
    for (int64_t i = 0; i < count; ++i) fn(i);
  }
}

// Calls f.template operator()<B>() with an unsigned type as wide as one element.
template <typename F>
void visit_bits(size_t element_size, F&& f) {
  switch (element_size) {
    case 1: f.template operator()<uint8_t>(); return;
    case 2: f.template operator()<uint16_t>(); return;
    case 4: f.template operator()<uint32_t>(); return;
    default: f.template operator()<uint64_t>(); return;
  }
}

// Element offsets of every position over dims [begin, end) of `sizes`, row-major.
std::vector<int64_t> offsets_over(const Shape& sizes, const Shape& strides, int64_t begin, int64_t end) {
  std::vector<int64_t> off{0};
  for (int64_t d = begin; d < end; ++d) {
    std::vector<int64_t> next;
    next.reserve(off.size() * size_t(sizes[size_t(d)]));
    for (int64_t o : off)
      for (int64_t i = 0; i < sizes[size_t(d)]; ++i) next.push_back(o + i * strides[size_t(d)]);
    off.swap(next);
  }
  return off;
}

// An operand walked as [outer, n, inner] around `dim` with the sizes `iter` (the index's, which
// may be smaller than the operand's own): element (o, j, i) is at outer[o] + j * step + inner[i].
struct AxisWalk {
  std::vector<int64_t> outer, inner;
  int64_t step;
  AxisWalk(const Tensor& t, const Shape& iter, int64_t dim)
      : outer(offsets_over(iter, t.strides(), 0, dim)),
        inner(offsets_over(iter, t.strides(), dim + 1, int64_t(iter.size()))),
        step(t.strides()[size_t(dim)]) {}
  int64_t num_outer() const { return int64_t(outer.size()); }
  int64_t num_inner() const { return int64_t(inner.size()); }
};

// 0-dim tensors index like 1-element vectors (PyTorch's ensure_nonempty_dim).
Tensor as_vector(const Tensor& t) { return t.dim() == 0 ? make_view(t, {1}, {1}, t.storage_offset()) : t; }
int64_t rank_of(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }
// The contiguous index seen with the caller's shape again (for saving).
Tensor with_shape(const Tensor& idx, const Shape& shape) {
  return idx.sizes() == shape ? idx : make_view(idx, shape, contiguous_strides(shape), idx.storage_offset());
}

Tensor contiguous_copy(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  Tensor c = make_tensor(t.sizes(), dtype, t.device());
  detail::copy_into(c, t);
  return c;
}

void check_index_dtype(const Tensor& index, const char* op, bool allow_int32) {
  if (index.dtype() == kInt64 || (allow_int32 && index.dtype() == kInt32)) return;
  throw DTypeError(std::string(op) + ": expected an index of dtype int64" + (allow_int32 ? " or int32" : "") +
                   ", got " + std::string(dtype_name(index.dtype())) + module_context() +
                   ". Hint: convert it with .to(rt::kInt64)");
}

// Position of the first value outside [0, bound), or -1. Chunked so large scans run in parallel.
int64_t first_out_of_range(const int64_t* p, int64_t n, int64_t bound) {
  auto scan = [&](int64_t b, int64_t e) -> int64_t {
    for (int64_t i = b; i < e; ++i)
      if (p[i] < 0 || p[i] >= bound) return i;
    return -1;
  };
  const int64_t chunks = n >= cpu::kParallelGrain ? std::min<int64_t>(cpu::num_threads(), n / cpu::kParallelGrain + 1) : 1;
  if (chunks <= 1) return scan(0, n);
  std::vector<int64_t> found(size_t(chunks), -1);
#pragma omp parallel for num_threads(int(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) found[size_t(c)] = scan(n * c / chunks, n * (c + 1) / chunks);
  for (int64_t f : found)
    if (f >= 0) return f;
  return -1;
}

std::string range_hint(int64_t bound) {
  return ". Hint: valid indices are 0.." + std::to_string(bound - 1) + "; negative indices are not allowed here";
}

void check_index_range(const Tensor& idx, int64_t bound, const char* op, int64_t dim, const std::string& shapes) {
  const int64_t* p = idx.data_ptr<int64_t>();
  const int64_t bad = first_out_of_range(p, idx.numel(), bound);
  if (bad < 0) return;
  throw IndexError(std::string(op) + ": index " + std::to_string(p[bad]) + " is out of bounds for dimension " +
                   std::to_string(dim) + " with size " + std::to_string(bound) + " (" + shapes + ")" +
                   module_context() + range_hint(bound));
}

// Runs a CUDA index kernel; its IndexError ("<op>: index v is out of bounds for dimension d with
// size n", found on the device) gets the shapes and the hint the CPU's check_index_range gives.
template <typename F>
void launch_checked(F&& launch, int64_t bound, const std::string& shapes) {
  try {
    launch();
  } catch (const IndexError& e) {
    throw IndexError(std::string(e.what()) + " (" + shapes + ")" + module_context() + range_hint(bound));
  }
}

Tensor zeros_on(const Shape& shape, ScalarType dtype, Device device) {
  return zeros(shape, TensorOptions(dtype).with_device(device));
}

// index.size(d) <= t.size(d) for every d (except `skip`, when >= 0).
void check_index_fits(const Tensor& index, const Tensor& t, const char* what, int64_t skip, const char* op,
                      const std::string& shapes) {
  const Tensor i1 = as_vector(index), t1 = as_vector(t);
  for (int64_t d = 0; d < i1.dim(); ++d) {
    if (d == skip || i1.sizes()[size_t(d)] <= t1.sizes()[size_t(d)]) continue;
    throw_shape_error(op, "index size " + std::to_string(i1.sizes()[size_t(d)]) + " at dimension " +
                              std::to_string(d) + " is larger than " + what + " size " +
                              std::to_string(t1.sizes()[size_t(d)]) + " (" + shapes + ")",
                      std::string("the index may not be larger than ") + what +
                          (skip >= 0 ? " in any dimension but dim=" + std::to_string(skip) : " in any dimension"));
  }
}

void check_same_rank(const Tensor& index, const Tensor& t, const char* what, const char* op, const std::string& shapes) {
  if (rank_of(index) == rank_of(t)) return;
  throw_shape_error(op, std::string("index tensor must have the same number of dimensions as ") + what + ": got " +
                            std::to_string(index.dim()) + " and " + std::to_string(t.dim()) + " (" + shapes + ")",
                    "unsqueeze the index so it has one dimension per dimension of the input");
}

// Pads t with zeros at the end of each dim up to `shape` (differentiable).
Tensor pad_to(Tensor t, const Shape& shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (t.sizes()[d] == shape[d]) continue;
    Shape zs = t.sizes();
    zs[d] = shape[d] - t.sizes()[d];
    t = cat({t, zeros_on(zs, t.dtype(), t.device())}, int64_t(d));
  }
  return t;
}

template <typename T>
inline void accumulate(T& dst, T v) {
  if constexpr (std::is_same_v<T, bool>) dst = dst || v;
  else dst = T(compute_t<T>(dst) + compute_t<T>(v));
}

constexpr int64_t kInnerBlock = 256;

// The device an index op runs on. Unlike elementwise ops, no operand may stay behind on the CPU
// as a 0-dim tensor (PyTorch's index ops take no Python numbers either).
Device index_op_device(const char* op, std::initializer_list<const Tensor*> operands) {
  const Device device = detail::op_device(op, operands);
  const Tensor* on_device = nullptr;
  size_t at = 0, i = 0;
  for (const Tensor* t : operands) {
    if (t->defined() && t->device() == device && !on_device) {
      on_device = t;
      at = i;
    }
    ++i;
  }
  i = 0;
  for (const Tensor* t : operands) {
    if (t->defined() && t->device() != device) detail::throw_device_mismatch(op, *on_device, at, *t, i);
    ++i;
  }
  return device;
}

// ---- CPU loops (operands validated; idx contiguous int64 in range) ---------------------------

// o1 += source scattered along dim by idx (a vector over source's dim). Each output element
// sums its sources in index order, so the result does not depend on the thread count.
void index_add_cpu(const Tensor& o1, const Tensor& s1, int64_t dim, const Tensor& idx) {
  const AxisWalk wo(o1, s1.sizes(), dim), ws(s1, s1.sizes(), dim);
  const int64_t O = ws.num_outer(), I = ws.num_inner(), K = idx.numel();
  const int64_t blocks = (I + kInnerBlock - 1) / kInnerBlock;
  const int64_t* ix = idx.data_ptr<int64_t>();
  visit_dtype(o1.dtype(), [&]<typename T>() {
    T* o = static_cast<T*>(o1.raw_data());
    const T* s = static_cast<const T*>(s1.raw_data());
    parallel_for(O * blocks, K * kInnerBlock, [&](int64_t w) {
      const int64_t oo = w / blocks, i0 = (w % blocks) * kInnerBlock, i1 = std::min(I, i0 + kInnerBlock);
      for (int64_t k = 0; k < K; ++k) {
        T* orow = o + wo.outer[size_t(oo)] + ix[k] * wo.step;
        const T* srow = s + ws.outer[size_t(oo)] + k * ws.step;
        for (int64_t i = i0; i < i1; ++i) accumulate(orow[wo.inner[size_t(i)]], srow[ws.inner[size_t(i)]]);
      }
    });
  });
}

void gather_cpu(const Tensor& out, const Tensor& t1, int64_t dim, const Tensor& idx) {
  const AxisWalk w(t1, idx.sizes(), dim);
  const int64_t O = w.num_outer(), I = w.num_inner(), n = idx.sizes()[size_t(dim)];
  const int64_t* ix = idx.data_ptr<int64_t>();
  visit_bits(t1.element_size(), [&]<typename B>() {
    const B* s = static_cast<const B*>(t1.raw_data());
    B* o = static_cast<B*>(out.raw_data());
    parallel_for(O * n, I, [&](int64_t r) {
      const B* base = s + w.outer[size_t(r / n)];
      const int64_t* ir = ix + r * I;
      B* orow = o + r * I;
      for (int64_t i = 0; i < I; ++i) orow[i] = base[ir[i] * w.step + w.inner[size_t(i)]];
    });
  });
}

// Different (outer, inner) positions write different outputs; each sums along dim in order.
void scatter_add_cpu(const Tensor& o1, int64_t dim, const Tensor& idx, const Tensor& s1) {
  const AxisWalk wo(o1, idx.sizes(), dim), ws(s1, idx.sizes(), dim);
  const int64_t O = wo.num_outer(), I = wo.num_inner(), n = idx.sizes()[size_t(dim)];
  const int64_t blocks = (I + kInnerBlock - 1) / kInnerBlock;
  const int64_t* ix = idx.data_ptr<int64_t>();
  visit_dtype(o1.dtype(), [&]<typename T>() {
    T* o = static_cast<T*>(o1.raw_data());
    const T* s = static_cast<const T*>(s1.raw_data());
    parallel_for(O * blocks, n * kInnerBlock, [&](int64_t w) {
      const int64_t oo = w / blocks, i0 = (w % blocks) * kInnerBlock, i1 = std::min(I, i0 + kInnerBlock);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t* ir = ix + (oo * n + j) * I;
        T* obase = o + wo.outer[size_t(oo)];
        const T* srow = s + ws.outer[size_t(oo)] + j * ws.step;
        for (int64_t i = i0; i < i1; ++i)
          accumulate(obase[ir[i] * wo.step + wo.inner[size_t(i)]], srow[ws.inner[size_t(i)]]);
      }
    });
  });
}

void index_select_cpu(const Tensor& out, const Tensor& t1, int64_t dim, const Tensor& idx) {
  const int64_t K = idx.numel();
  Shape iter = t1.sizes();
  iter[size_t(dim)] = K;
  const int64_t* ix = idx.data_ptr<int64_t>();
  const size_t es = t1.element_size();
  if (t1.is_contiguous()) {
    int64_t O = 1, I = 1;
    for (int64_t d = 0; d < dim; ++d) O *= iter[size_t(d)];
    for (size_t d = size_t(dim) + 1; d < iter.size(); ++d) I *= iter[d];
    const int64_t N = t1.sizes()[size_t(dim)];
    const char* s = static_cast<const char*>(t1.raw_data());
    char* o = static_cast<char*>(out.raw_data());
    const size_t row = size_t(I) * es;
    parallel_for(O * K, I, [&](int64_t r) {
      const int64_t oo = r / K, k = r % K;
      std::memcpy(o + size_t(r) * row, s + size_t(oo * N + ix[k]) * row, row);
    });
    return;
  }
  const AxisWalk w(t1, iter, dim);
  const int64_t O = w.num_outer(), I = w.num_inner();
  visit_bits(es, [&]<typename B>() {
    const B* s = static_cast<const B*>(t1.raw_data());
    B* o = static_cast<B*>(out.raw_data());
    parallel_for(O * K, I, [&](int64_t r) {
      const B* base = s + w.outer[size_t(r / K)] + ix[r % K] * w.step;
      B* orow = o + r * I;
      for (int64_t i = 0; i < I; ++i) orow[i] = base[w.inner[size_t(i)]];
    });
  });
}

// zeros(shape).index_add(dim, idx, source): the backward of index_select. idx is a validated
// contiguous int64 vector on source's device.
Tensor index_add_into_zeros(const Shape& shape, int64_t dim, const Tensor& idx, const Tensor& source) {
  OpGuard guard("index_add", source, idx);
  const Device device = index_op_device("index_add", {&source, &idx});
  Tensor out = zeros_on(shape, source.dtype(), device);
  const Tensor o1 = as_vector(out), s1 = as_vector(source);
  if (!device.is_cpu())
    launch_checked([&] { dispatch::index_add(device, o1, dim, idx, s1); }, o1.sizes()[size_t(dim)],
                   "index_add into shape " + format_shape(shape) + ", source shape " + format_shape(source.sizes()));
  else
    index_add_cpu(o1, s1, dim, idx);
  if (autograd::any_requires_grad(source))
    record("IndexAddBackward0", {source}, {out}, [dim, idx](const TensorList& g) {
      return TensorList{index_select(g[0], dim, idx)};
    });
  return out;
}

}  // namespace

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  OpGuard guard("gather", t, index);
  const std::string shapes = "input shape " + format_shape(t.sizes()) + ", index shape " + format_shape(index.sizes());
  check_index_dtype(index, "gather", false);
  dim = wrap_dim(dim, rank_of(t), "gather");
  check_same_rank(index, t, "input", "gather", shapes);
  check_index_fits(index, t, "input", dim, "gather", shapes);
  const Device device = index_op_device("gather", {&t, &index});
  const Tensor t1 = as_vector(t), idx = contiguous_copy(as_vector(index), kInt64);
  Tensor out = make_tensor(index.sizes(), t.dtype(), device);
  const int64_t bound = t1.sizes()[size_t(dim)];
  if (!device.is_cpu()) {
    launch_checked([&] { dispatch::gather(device, as_vector(out), t1, dim, idx); }, bound, shapes);
  } else {
    check_index_range(idx, bound, "gather", dim, shapes);
    gather_cpu(out, t1, dim, idx);
  }
  if (autograd::any_requires_grad(t))
    record("GatherBackward0", {t}, {out},
           [shape = t.sizes(), dim, si = SavedTensor(with_shape(idx, index.sizes()))](const TensorList& g) {
             return TensorList{scatter_add(zeros_on(shape, g[0].dtype(), g[0].device()), dim, si.unpack(), g[0])};
           });
  return out;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Promote, {&self, &src}); ac)
    return scatter_add(ac[0], dim, index, ac[1]);
  OpGuard guard("scatter_add", self, index, src);
  const std::string shapes = "self shape " + format_shape(self.sizes()) + ", index shape " +
                             format_shape(index.sizes()) + ", src shape " + format_shape(src.sizes());
  check_index_dtype(index, "scatter_add", false);
  if (src.dtype() != self.dtype())
    throw DTypeError("scatter_add: expected self and src to have the same dtype, got " +
                     std::string(dtype_name(self.dtype())) + " and " + std::string(dtype_name(src.dtype())) +
                     module_context() + ". Hint: convert src with .to(self.dtype())");
  dim = wrap_dim(dim, rank_of(self), "scatter_add");
  check_same_rank(index, self, "self", "scatter_add", shapes);
  check_same_rank(index, src, "src", "scatter_add", shapes);
  check_index_fits(index, src, "src", -1, "scatter_add", shapes);
  check_index_fits(index, self, "self", dim, "scatter_add", shapes);
  const Device device = index_op_device("scatter_add", {&self, &index, &src});
  const Tensor idx = contiguous_copy(as_vector(index), kInt64);
  const Tensor s1 = as_vector(src);
  Tensor out = make_tensor(self.sizes(), self.dtype(), device);
  detail::copy_into(out, self);
  const Tensor o1 = as_vector(out);
  const int64_t bound = o1.sizes()[size_t(dim)];
  if (!device.is_cpu()) {
    launch_checked([&] { dispatch::scatter_add(device, o1, dim, idx, s1); }, bound, shapes);
  } else {
    check_index_range(idx, bound, "scatter_add", dim, shapes);
    scatter_add_cpu(o1, dim, idx, s1);
  }
  if (autograd::any_requires_grad(self, src)) {
    const bool gs = self.requires_grad(), gsrc = src.requires_grad();
    record("ScatterAddBackward0", {self, src}, {out},
           [dim, gs, gsrc, src_shape = src.sizes(), si = SavedTensor(with_shape(idx, index.sizes()))](const TensorList& g) {
             Tensor gsrc_t;
             if (gsrc) gsrc_t = pad_to(gather(g[0], dim, si.unpack()), src_shape);
             return TensorList{gs ? g[0] : Tensor(), gsrc_t};
           });
  }
  return out;
}

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  OpGuard guard("index_select", t, index);
  const std::string shapes = "input shape " + format_shape(t.sizes()) + ", index shape " + format_shape(index.sizes());
  check_index_dtype(index, "index_select", true);
  if (index.dim() > 1)
    throw_shape_error("index_select", "index must be a vector (0-dim or 1-dim), got " + shapes,
                      "flatten the index, then reshape the result");
  dim = wrap_dim(dim, rank_of(t), "index_select");
  if (t.dim() == 0 && index.numel() != 1)
    throw_shape_error("index_select", "an index into a 0-dim tensor can have only 1 value, got " +
                                          std::to_string(index.numel()) + " (" + shapes + ")");
  const Device device = index_op_device("index_select", {&t, &index});
  const Tensor t1 = as_vector(t), idx = contiguous_copy(as_vector(index), kInt64);
  Shape out_shape = t.sizes();
  if (t.dim() > 0) out_shape[size_t(dim)] = idx.numel();
  Tensor out = make_tensor(out_shape, t.dtype(), device);
  const int64_t bound = t1.sizes()[size_t(dim)];
  if (!device.is_cpu()) {
    launch_checked([&] { dispatch::index_select(device, as_vector(out), t1, dim, idx); }, bound, shapes);
  } else {
    check_index_range(idx, bound, "index_select", dim, shapes);
    index_select_cpu(out, t1, dim, idx);
  }
  if (autograd::any_requires_grad(t))
    record("IndexSelectBackward0", {t}, {out}, [shape = t.sizes(), dim, si = SavedTensor(idx)](const TensorList& g) {
      return TensorList{index_add_into_zeros(shape, dim, si.unpack(), g[0])};
    });
  return out;
}

namespace {

[[noreturn]] void throw_negative_class(const Tensor& labels, int64_t value, int64_t position) {
  throw ValueError("one_hot: class values must be non-negative, got " + std::to_string(value) + " at flat position " +
                   std::to_string(position) + " of labels with shape " + format_shape(labels.sizes()) +
                   module_context());
}

[[noreturn]] void throw_class_too_large(const Tensor& labels, int64_t num_classes, int64_t value, int64_t position) {
  throw ValueError("one_hot: class values must be smaller than num_classes (" + std::to_string(num_classes) +
                   "), got " + std::to_string(value) + " at flat position " + std::to_string(position) + " of labels with shape " +
                   format_shape(labels.sizes()) + module_context() +
                   ". Hint: pass num_classes=-1 to infer it from the labels");
}

// one_hot of int64 labels l on a GPU: the label range is read back (two reductions, one copy),
// then ones are scattered into zeros on the device.
Tensor one_hot_cuda(const Tensor& labels, const Tensor& l, int64_t num_classes) {
  const int64_t n = l.numel();
  if (n > 0) {
    const Tensor flat = l.reshape({n});
    const std::vector<int64_t> range = stack({amin(flat), amax(flat)}).to_vector<int64_t>();
    if (range[0] < 0) {
      const int64_t first = argmax(lt(flat, scalar_to_tensor(Scalar(int64_t(0)))).to(kInt64)).item<int64_t>();
      throw_negative_class(labels, flat.select(0, first).item<int64_t>(), first);
    }
    if (num_classes == -1) num_classes = range[1] + 1;
    else if (range[1] >= num_classes)
      throw_class_too_large(labels, num_classes, range[1], argmax(flat).item<int64_t>());
  }
  Shape shape = labels.sizes();
  shape.push_back(num_classes);
  const TensorOptions opts = TensorOptions(kInt64).with_device(l.device());
  if (n == 0 || num_classes == 0) return zeros(shape, opts);
  return scatter_add(zeros({n, num_classes}, opts), 1, l.reshape({n, 1}), ones({n, 1}, opts)).reshape(shape);
}

}  // namespace

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
  OpGuard guard("one_hot", labels);
  if (!is_integral(labels.dtype(), false))
    throw DTypeError("one_hot: expected a tensor of integer class labels (int64), got " +
                     std::string(dtype_name(labels.dtype())) + module_context() +
                     ". Hint: convert it with .to(rt::kInt64)");
  if (num_classes < -1)
    throw ValueError("one_hot: num_classes must be -1 (infer from the labels) or non-negative, got " +
                     std::to_string(num_classes));
  const Tensor l = contiguous_copy(labels, kInt64);
  const int64_t n = l.numel();
  if (n == 0 && num_classes == -1)
    throw ValueError("one_hot: cannot infer the number of classes from an empty tensor (shape " +
                     format_shape(labels.sizes()) + "); pass num_classes explicitly");
  if (!l.is_cpu()) return one_hot_cuda(labels, l, num_classes);
  const int64_t* p = l.data_ptr<int64_t>();
  int64_t neg = -1, top = -1;  // positions of the first negative and of the first largest label
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 && neg < 0) neg = i;
    if (top < 0 || p[i] > p[top]) top = i;
  }
  if (neg >= 0) throw_negative_class(labels, p[neg], neg);
  if (num_classes == -1) num_classes = p[top] + 1;
  else if (n > 0 && p[top] >= num_classes) throw_class_too_large(labels, num_classes, p[top], top);
  Shape shape = labels.sizes();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, kInt64);
  int64_t* o = out.data_ptr<int64_t>();
  const int64_t C = num_classes;
  parallel_for(n, C, [&](int64_t i) { o[i * C + p[i]] = 1; });
  return out;
}

}  // namespace rt
