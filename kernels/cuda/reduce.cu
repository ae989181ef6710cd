// Reduction launchers: see reduce.h. Two layouts (Note [Reduction layouts]) and an optional
// split pass through caller-provided scratch.
//
// Note [Reduction layouts]
// The input's kept dims K and reduced dims R are coalesced separately. "Row" layout: a warp
// (short rows) or a block (long rows) reduces one result, its threads striding along R; used
// whenever R's innermost dim is contiguous or K's is not. "Column" layout: K's innermost dim
// is contiguous and R's is not (a reduction over a leading dim): a 32 x 8 block gives each
// x-thread one result, so neighbouring threads read neighbouring addresses, and the 8 y-threads
// share the reduction, merged in shared memory. When the results alone cannot fill the GPU and
// rows are long, each result's range of R is cut into `splits` chunks reduced by separate
// groups into scratch (acc values, result-major), and a finishing kernel merges each result's
// chunks in order with a warp. All merge orders depend on the shape alone.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cuda/elementwise_loop.cuh"
#include "cuda/reduce.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

using ew::reg_t;
using ew::to_reg;
using ew::from_reg;

constexpr int kTargetBlocks = 1024;   // enough 256-thread blocks to fill an H200 (132 SMs) several times
constexpr int64_t kWarpRowMax = 1024;  // rows up to this length get a warp each
constexpr int kColY = 8;               // y-threads per column block

// Offsets (in elements) over a list of coalesced dims, for a row-major index over them.
struct DimCalc {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  __device__ __forceinline__ int64_t get(int64_t i) const {
    if (ndim <= 1) return ndim == 0 ? 0 : i * strides[0];
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / sizes[d];
      off += (i - q * sizes[d]) * strides[d];
      i = q;
    }
    return off;
  }
  void push(int64_t size, int64_t stride) {
    if (ndim > 0 && strides[ndim - 1] == stride * size) {
      sizes[ndim - 1] *= size;
      strides[ndim - 1] = stride;
    } else {
      sizes[ndim] = size;
      strides[ndim] = stride;
      ++ndim;
    }
  }
};

struct Plan {
  DimCalc kept, red;
  int64_t num_out = 1, len = 1;
  bool column = false, warp_rows = false;
  int64_t splits = 1, chunk = 0;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Plan make_plan(const TensorArg& in, uint32_t dim_mask, const char* op) {
  if (in.ndim > kMaxDims) throw ShapeError(std::string(op) + " on CUDA: at most 8 dims are supported");
  if (dim_mask >> in.ndim)
    throw IndexError(std::string(op) + " on CUDA: the dim mask names a dim beyond the input's " +
                     std::to_string(in.ndim) + " dims");
  const uint32_t mask = dim_mask == 0 ? ~0u : dim_mask;
  Plan p;
  for (int d = 0; d < in.ndim; ++d) {
    const bool reduced = (mask >> d) & 1u;
    (reduced ? p.len : p.num_out) *= in.sizes[d];
    if (in.sizes[d] != 1) (reduced ? p.red : p.kept).push(in.sizes[d], in.strides[d]);
  }
  const bool kept_inner_contig = p.kept.ndim > 0 && p.kept.strides[p.kept.ndim - 1] == 1;
  const bool red_inner_contig = p.red.ndim > 0 && p.red.strides[p.red.ndim - 1] == 1;
  p.column = p.red.ndim > 0 && kept_inner_contig && !red_inner_contig;
  p.chunk = p.len;
  if (p.column) {
    const int64_t blocks = ceil_div(p.num_out, 32);
    if (blocks < kTargetBlocks && p.len >= 4 * 512)
      p.splits = std::min(ceil_div(kTargetBlocks, blocks), ceil_div(p.len, 512));
  } else {
    p.warp_rows = p.len <= kWarpRowMax;
    if (!p.warp_rows && p.num_out < kTargetBlocks && p.len >= 2 * 4096)
      p.splits = std::min(ceil_div(kTargetBlocks, p.num_out), ceil_div(p.len, 4096));
  }
  if (p.splits > 1) {
    p.chunk = ceil_div(p.len, p.splits);
    p.splits = ceil_div(p.len, p.chunk);
  }
  return p;
}

// ---- accumulators ---------------------------------------------------------------------------
// Word by word through memcpy: reading a double or a struct through an int* breaks C++'s aliasing
// rules, and an optimiser that uses them may drop the writes (the CUDA emulator's g++ -O3 did:
// float64 and int64 sums came out NaN or garbage).
template <typename A>
__device__ __forceinline__ A shfl_down(A v, int offset) {
  static_assert(sizeof(A) % 4 == 0, "accumulators are made of 32-bit words");
  int words[sizeof(A) / 4];
  memcpy(words, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < int(sizeof(A) / 4); ++k) words[k] = __shfl_down_sync(0xffffffffu, words[k], offset);
  A r;
  memcpy(&r, words, sizeof(A));
  return r;
}

template <typename T>
using float_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
constexpr bool is_float_storage = std::is_floating_point_v<reg_t<T>>;

enum class SumKind { Sum, Mean, Prod };

// Sum, mean and prod: float for the half types and float32, double for float64, int64 for
// integers; out is T for floating T and int64 otherwise.
template <typename T, SumKind K>
struct SumReducer {
  using in_t = T;
  using acc = std::conditional_t<is_float_storage<T>, float_acc_t<T>, int64_t>;
  using out_t = std::conditional_t<is_float_storage<T>, T, int64_t>;
  out_t* out;
  int64_t len;
  __device__ acc identity() const { return K == SumKind::Prod ? acc(1) : acc(0); }
  __device__ acc project(T v, int64_t) const { return acc(to_reg<reg_t<T>>(v)); }
  __device__ acc combine(acc a, acc b) const { return K == SumKind::Prod ? a * b : a + b; }
  __device__ void store(int64_t o, acc a) const {
    if constexpr (K == SumKind::Mean) out[o] = from_reg<out_t>(reg_t<T>(double(a) / double(len)));
    else out[o] = from_reg<out_t>(a);
  }
};

template <typename C>
__device__ __forceinline__ bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

// Max or min values, NaN propagating.
template <typename T, bool IsMax>
struct ExtremeReducer {
  using in_t = T;
  using acc = reg_t<T>;  // float, double or int64
  T* out;
  __device__ acc identity() const {
    if constexpr (std::is_floating_point_v<acc>) return IsMax ? acc(-INFINITY) : acc(INFINITY);
    else return IsMax ? acc(INT64_MIN) : acc(INT64_MAX);  // acc is int64_t
  }
  __device__ acc project(T v, int64_t) const { return to_reg<acc>(v); }
  __device__ acc combine(acc a, acc b) const {
    if (is_nan(a)) return a;
    if (is_nan(b)) return b;
    return IsMax ? (b > a ? b : a) : (b < a ? b : a);
  }
  __device__ void store(int64_t o, acc a) const { out[o] = from_reg<T>(a); }
};

template <typename C>
struct ValueIndex {
  C v;
  int64_t i;  // -1: no element yet
};

// Value and first index of the max or min; NaN wins, ties go to the lower index, so the
// merge order does not matter.
template <typename T, bool IsMax>
struct ArgReducer {
  using in_t = T;
  using C = reg_t<T>;
  using acc = ValueIndex<C>;
  int64_t* indices;
  T* values;  // may be null
  __device__ acc identity() const { return acc{0, -1}; }
  __device__ acc project(T v, int64_t idx) const { return acc{to_reg<C>(v), idx}; }
  __device__ acc combine(acc a, acc b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) return (an && bn) ? (b.i < a.i ? b : a) : (an ? a : b);
    if (a.v == b.v) return b.i < a.i ? b : a;
    return (IsMax ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ void store(int64_t o, acc a) const {
    indices[o] = a.i;
    if (values) values[o] = from_reg<T>(a.v);
  }
};

template <typename A>
struct Welford {
  A mean, m2;
  int64_t n;
};

// Var and std by Welford's update, Chan's merge; divides by max(0, n - correction).
template <typename T, bool Sqrt>
struct VarReducer {
  using in_t = T;
  using A = float_acc_t<T>;
  using acc = Welford<A>;
  T* out;
  int64_t correction;
  __device__ acc identity() const { return acc{0, 0, 0}; }
  __device__ acc project(T v, int64_t) const { return acc{A(to_reg<reg_t<T>>(v)), 0, 1}; }
  __device__ acc combine(acc a, acc b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const int64_t n = a.n + b.n;
    const A delta = b.mean - a.mean, fb = A(b.n) / A(n);
    return acc{a.mean + delta * fb, a.m2 + b.m2 + delta * delta * A(a.n) * fb, n};
  }
  __device__ void store(int64_t o, acc a) const {
    const double denom = fmax(0.0, double(a.n - correction));
    const double v = double(a.m2) / denom;
    out[o] = from_reg<T>(reg_t<T>(Sqrt ? ::sqrt(v) : v));
  }
};

// all (Any = false) / any: nonzero (NaN included) counts as true.
template <typename T, bool Any>
struct LogicReducer {
  using in_t = T;
  using acc = int;
  bool* out;
  __device__ acc identity() const { return Any ? 0 : 1; }
  __device__ acc project(T v, int64_t) const { return to_reg<bool>(v) ? 1 : 0; }
  __device__ acc combine(acc a, acc b) const { return Any ? (a | b) : (a & b); }
  __device__ void store(int64_t o, acc a) const { out[o] = a != 0; }
};

// ---- kernels --------------------------------------------------------------------------------
// Reduces elements [lo, hi) of R for kept index o, thread `lane` of a group of `width`.
template <typename R>
__device__ __forceinline__ typename R::acc reduce_range(const R& r, const typename R::in_t* in, const Plan& p,
                                                        int64_t base, int64_t lo, int64_t hi, int lane, int width) {
  typename R::acc a = r.identity();
#pragma unroll 4
  for (int64_t i = lo + lane; i < hi; i += width) a = r.combine(a, r.project(in[base + p.red.get(i)], i));
  return a;
}

template <typename R>
__device__ __forceinline__ typename R::acc warp_reduce(const R& r, typename R::acc a) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) a = r.combine(a, shfl_down(a, off));
  return a;  // lane 0 holds the result
}

template <typename R>
__device__ __forceinline__ void emit(const R& r, const Plan& p, int64_t w, typename R::acc a, typename R::acc* partial) {
  if (p.splits == 1) r.store(w, a);
  else partial[w] = a;
}

template <typename R>
__global__ void row_kernel(R r, const typename R::in_t* in, Plan p, typename R::acc* partial) {
  using acc = typename R::acc;
  const int64_t items = p.num_out * p.splits;
  if (p.warp_rows) {
    const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
    for (int64_t w = int64_t(blockIdx.x) * warps + threadIdx.x / 32; w < items; w += int64_t(gridDim.x) * warps) {
      const int64_t o = w / p.splits, lo = (w % p.splits) * p.chunk, hi = min(p.len, lo + p.chunk);
      acc a = warp_reduce(r, reduce_range(r, in, p, p.kept.get(o), lo, hi, lane, 32));
      if (lane == 0) emit(r, p, w, a, partial);
    }
    return;
  }
  RT_SHARED(smem, acc[32]);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {
    const int64_t o = w / p.splits, lo = (w % p.splits) * p.chunk, hi = min(p.len, lo + p.chunk);
    acc a = warp_reduce(r, reduce_range(r, in, p, p.kept.get(o), lo, hi, threadIdx.x, blockDim.x));
    __syncthreads();  // smem is reused across items
    if (lane == 0) smem[warp] = a;
    __syncthreads();
    if (warp == 0) {
      a = lane < warps ? smem[lane] : r.identity();
      a = warp_reduce(r, a);
      if (lane == 0) emit(r, p, w, a, partial);
    }
  }
}

// blockDim (32, kColY); blockIdx.x picks 32 results, blockIdx.y the split.
template <typename R>
__global__ void column_kernel(R r, const typename R::in_t* in, Plan p, typename R::acc* partial) {
  using acc = typename R::acc;
  RT_SHARED(smem, acc[kColY][32]);
  const int64_t o = int64_t(blockIdx.x) * 32 + threadIdx.x;
  const int64_t s = blockIdx.y, lo = s * p.chunk, hi = min(p.len, lo + p.chunk);
  acc a = r.identity();
  if (o < p.num_out) a = reduce_range(r, in, p, p.kept.get(o), lo, hi, threadIdx.y, kColY);
  smem[threadIdx.y][threadIdx.x] = a;
  __syncthreads();
  if (threadIdx.y == 0 && o < p.num_out) {
    for (int y = 1; y < kColY; ++y) a = r.combine(a, smem[y][threadIdx.x]);
    emit(r, p, o * p.splits + s, a, partial);
  }
}

// One warp per result merges its `splits` partial accumulators.
template <typename R>
__global__ void finish_kernel(R r, Plan p, const typename R::acc* partial) {
  const int lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t o = int64_t(blockIdx.x) * warps + threadIdx.x / 32; o < p.num_out; o += int64_t(gridDim.x) * warps) {
    typename R::acc a = r.identity();
    for (int64_t s = lane; s < p.splits; s += 32) a = r.combine(a, partial[o * p.splits + s]);
    a = warp_reduce(r, a);
    if (lane == 0) r.store(o, a);
  }
}

unsigned capped_blocks(int64_t n) { return unsigned(std::max<int64_t>(1, std::min<int64_t>(n, 65535 * 32))); }

template <typename R>
void run(const R& r, const TensorArg& in, const Plan& p, void* scratch, size_t scratch_bytes, const char* op,
         cudaStream_t stream) {
  using acc = typename R::acc;
  if (p.num_out == 0) return;
  const size_t need = p.splits > 1 ? size_t(p.num_out * p.splits) * sizeof(acc) : 0;
  if (scratch_bytes < need || (need > 0 && scratch == nullptr))
    throw ValueError(std::string(op) + " on CUDA: needs " + std::to_string(need) + " bytes of scratch, got " +
                     std::to_string(scratch_bytes) + ". Hint: size it with reduce_scratch_bytes()");
  acc* partial = static_cast<acc*>(scratch);
  const auto* data = static_cast<const typename R::in_t*>(in.data);
  if (p.column) {
    const dim3 grid(unsigned(ceil_div(p.num_out, 32)), unsigned(p.splits));
    if (grid.x > 2147483647u) throw ShapeError(std::string(op) + " on CUDA: too many results for one launch");
    RT_LAUNCH(grid, dim3(32, kColY), stream, column_kernel<R>)(r, data, p, partial);
  } else if (p.warp_rows) {
    RT_LAUNCH(capped_blocks(ceil_div(p.num_out * p.splits, kBlock / 32)), kBlock, stream, row_kernel<R>)(
        r, data, p, partial);
  } else {
    RT_LAUNCH(capped_blocks(p.num_out * p.splits), kBlock, stream, row_kernel<R>)(r, data, p, partial);
  }
  check_launch(op);
  if (p.splits > 1) {
    RT_LAUNCH(capped_blocks(ceil_div(p.num_out, kBlock / 32)), kBlock, stream, finish_kernel<R>)(r, p, partial);
    check_launch(op);
  }
}

// Calls f.template operator()<R>() with the reducer type of op over storage type T, or throws.
template <typename T, typename F>
void visit_reducer(ReduceOp op, const char* name, F&& f) {
  constexpr bool fl = is_float_storage<T>;
  auto need_float = [&]() {
    throw DTypeError(std::string(name) + " on CUDA: expected a floating point input, got " +
                     ew::dtype_str(ew::dtype_of_storage<T>) + ". Hint: convert it first, e.g. x.to(rt::kFloat32)");
  };
  switch (op) {
    case ReduceOp::Sum: return f.template operator()<SumReducer<T, SumKind::Sum>>();
    case ReduceOp::Prod: return f.template operator()<SumReducer<T, SumKind::Prod>>();
    case ReduceOp::Mean:
      if constexpr (fl) return f.template operator()<SumReducer<T, SumKind::Mean>>();
      else return need_float();
    case ReduceOp::Var:
      if constexpr (fl) return f.template operator()<VarReducer<T, false>>();
      else return need_float();
    case ReduceOp::Std:
      if constexpr (fl) return f.template operator()<VarReducer<T, true>>();
      else return need_float();
    case ReduceOp::Max: return f.template operator()<ExtremeReducer<T, true>>();
    case ReduceOp::Min: return f.template operator()<ExtremeReducer<T, false>>();
    case ReduceOp::ArgMax: return f.template operator()<ArgReducer<T, true>>();
    case ReduceOp::ArgMin: return f.template operator()<ArgReducer<T, false>>();
    case ReduceOp::All: return f.template operator()<LogicReducer<T, false>>();
    case ReduceOp::Any: return f.template operator()<LogicReducer<T, true>>();
  }
}

ScalarType out_dtype(ReduceOp op, ScalarType in) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: return is_floating(in) ? in : kInt64;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: return kInt64;
    case ReduceOp::All:
    case ReduceOp::Any: return kBool;
    default: return in;
  }
}

bool has_identity(ReduceOp op) {
  return !(op == ReduceOp::Max || op == ReduceOp::Min || op == ReduceOp::ArgMax || op == ReduceOp::ArgMin);
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::Var: return "var";
    case ReduceOp::Std: return "std";
    case ReduceOp::All: return "all";
    case ReduceOp::Any: return "any";
  }
  return "reduce";
}

size_t reduce_scratch_bytes(ReduceOp op, const TensorArg& in, uint32_t dim_mask) {
  const char* name = reduce_op_name(op);
  const Plan p = make_plan(in, dim_mask, name);
  if (p.splits <= 1 || p.num_out == 0) return 0;
  size_t acc_size = 0;
  ew::visit_storage_host(in.dtype, [&]<typename T>() {
    visit_reducer<T>(op, name, [&]<typename R>() { acc_size = sizeof(typename R::acc); });
  });
  return size_t(p.num_out * p.splits) * acc_size;
}

void reduce(ReduceOp op, const TensorArg& out, const TensorArg& in, uint32_t dim_mask, int64_t correction,
            void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  const char* name = reduce_op_name(op);
  const Plan p = make_plan(in, dim_mask, name);
  if (out.numel() != p.num_out || !out.is_contiguous())
    throw ShapeError(std::string(name) + " on CUDA: out must be contiguous with " + std::to_string(p.num_out) +
                     " elements (one per result), got " + std::to_string(out.numel()));
  if (out.dtype != out_dtype(op, in.dtype))
    throw DTypeError(std::string(name) + " on CUDA: out must be " + ew::dtype_str(out_dtype(op, in.dtype)) +
                       " for a " + ew::dtype_str(in.dtype) + " input, got " + ew::dtype_str(out.dtype));
  if (p.len == 0 && p.num_out > 0 && !has_identity(op))
    throw ShapeError(std::string(name) + " on CUDA: the reduction covers zero elements and has no identity. "
                     "Hint: reduce over dims of non-zero size, or check numel() first");
  ew::visit_storage_host(in.dtype, [&]<typename T>() {
    visit_reducer<T>(op, name, [&]<typename R>() {
      R r{};
      if constexpr (requires { r.len; }) {
        r.out = static_cast<decltype(r.out)>(out.data);
        r.len = p.len;
      } else if constexpr (requires { r.correction; }) {
        r.out = static_cast<decltype(r.out)>(out.data);
        r.correction = correction;
      } else if constexpr (requires { r.indices; }) {
        r.indices = static_cast<int64_t*>(out.data);
        r.values = nullptr;
      } else {
        r.out = static_cast<decltype(r.out)>(out.data);
      }
      run(r, in, p, scratch, scratch_bytes, name, stream);
    });
  });
}

void reduce_with_indices(bool is_max, const TensorArg& values, const TensorArg& indices, const TensorArg& in, int dim,
                         void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  const char* name = is_max ? "max" : "min";
  if (dim < 0 || dim >= in.ndim)
    throw IndexError(std::string(name) + " on CUDA: dim " + std::to_string(dim) + " is out of range for " +
                     std::to_string(in.ndim) + " dims");
  const Plan p = make_plan(in, 1u << dim, name);
  if (indices.dtype != kInt64 || values.dtype != in.dtype)
    throw DTypeError(std::string(name) + " on CUDA: expected " + ew::dtype_str(in.dtype) + " values and int64 indices");
  if (values.numel() != p.num_out || indices.numel() != p.num_out || !values.is_contiguous() || !indices.is_contiguous())
    throw ShapeError(std::string(name) + " on CUDA: values and indices must be contiguous with " +
                     std::to_string(p.num_out) + " elements");
  if (p.len == 0 && p.num_out > 0)
    throw ShapeError(std::string(name) + " on CUDA: dimension " + std::to_string(dim) + " has size 0 and " + name +
                     " has no identity");
  ew::visit_storage_host(in.dtype, [&]<typename T>() {
    auto go = [&]<typename R>() {
      R r{};
      r.indices = static_cast<int64_t*>(indices.data);
      r.values = static_cast<T*>(values.data);
      run(r, in, p, scratch, scratch_bytes, name, stream);
    };
    if (is_max) go.template operator()<ArgReducer<T, true>>();
    else go.template operator()<ArgReducer<T, false>>();
  });
}

}  // namespace rt::cuda_kernels
