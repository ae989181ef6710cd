// index_select, gather and scatter-add along a dim. See kernels/cuda/index.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "cuda/device_error_flag.cuh"
#include "cuda/elementwise_loop.cuh"
#include "cuda/index.h"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

// An iteration shape walked in row-major order with two operands: A is addressed at the
// position p itself, B at p with its `dim` coordinate replaced by an index value (which must lie
// in [0, bound)). Gathers read B and write A; scatter-adds read A and add into B.
struct AxisMap {
  int ndim = 0, dim = 0;
  int64_t sizes[kMaxDims] = {}, a_strides[kMaxDims] = {}, b_strides[kMaxDims] = {};
  int64_t bound = 0;
};

// Drops size-1 dims and merges neighbours that step through both operands as one dim, so a
// contiguous case runs as [outer, dim, inner]. The dim itself is always kept.
AxisMap coalesce(const int64_t* sizes, const int64_t* a_strides, const int64_t* b_strides, int ndim, int dim,
                 int64_t bound) {
  AxisMap m;
  m.bound = bound;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1 && d != dim) continue;
    const int last = m.ndim - 1;
    const bool mergeable = last >= 0 && d != dim && last != m.dim &&
                           m.a_strides[last] == a_strides[d] * sizes[d] && m.b_strides[last] == b_strides[d] * sizes[d];
    if (mergeable) {
      m.sizes[last] *= sizes[d];
      m.a_strides[last] = a_strides[d];
      m.b_strides[last] = b_strides[d];
      continue;
    }
    if (d == dim) m.dim = m.ndim;
    m.sizes[m.ndim] = sizes[d];
    m.a_strides[m.ndim] = a_strides[d];
    m.b_strides[m.ndim] = b_strides[d];
    ++m.ndim;
  }
  return m;
}

struct Located {
  int64_t a = 0, b = 0, along = 0;  // A's offset, B's offset without the dim term, p[dim]
};

__device__ __forceinline__ Located locate(const AxisMap& m, int64_t e) {
  Located o;
  for (int d = m.ndim - 1; d >= 0; --d) {
    const int64_t c = e % m.sizes[d];
    e /= m.sizes[d];
    o.a += c * m.a_strides[d];
    if (d == m.dim) o.along = c;
    else o.b += c * m.b_strides[d];
  }
  return o;
}

// B is an unsigned type as wide as one element: gathers copy bits.
template <typename B, bool kPerElement>
__global__ void gather_kernel(B* __restrict__ out, const B* __restrict__ in, const int64_t* __restrict__ index,
                              AxisMap m, int64_t n, long long* flag) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const Located o = locate(m, e);
    const int64_t v = index[kPerElement ? e : o.along];
    if (v < 0 || v >= m.bound) {
      report_bad_value(flag, v);
      continue;
    }
    out[o.a] = in[o.b + v * m.b_strides[m.dim]];
  }
}

// What a storage type T is summed in: float for the half types and float, double for double,
// unsigned 64-bit (two's complement sums) for the integers and bool.
template <typename T>
using sum_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, __half> ||
                                                        std::is_same_v<T, __nv_bfloat16>,
                                                    float, unsigned long long>>;

// Types whose atomicAdd works on the tensor itself; the others sum in a scratch copy.
template <typename T>
inline constexpr bool kAddsInPlace =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int64_t>;

template <typename T>
__device__ __forceinline__ sum_t<T> widen(T v) {
  if constexpr (std::is_same_v<sum_t<T>, unsigned long long>)
    return static_cast<unsigned long long>(static_cast<long long>(v));
  else
    return to_acc(v);
}

template <typename T>
__device__ __forceinline__ T narrow(sum_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;  // a sum of 0/1 values: any true
  else if constexpr (std::is_same_v<sum_t<T>, unsigned long long>) return static_cast<T>(static_cast<long long>(v));
  else return from_acc<T>(v);
}

template <typename T, bool kPerElement>
__global__ void scatter_add_kernel(sum_t<T>* __restrict__ acc, const T* __restrict__ src,
                                   const int64_t* __restrict__ index, AxisMap m, int64_t n, long long* flag) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    const Located o = locate(m, e);
    const int64_t v = index[kPerElement ? e : o.along];
    if (v < 0 || v >= m.bound) {
      report_bad_value(flag, v);
      continue;
    }
    atomicAdd(&acc[o.b + v * m.b_strides[m.dim]], widen(src[o.a]));
  }
}

template <typename T>
__global__ void widen_kernel(sum_t<T>* __restrict__ acc, const T* __restrict__ x, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    acc[e] = widen(x[e]);
}

template <typename T>
__global__ void narrow_kernel(T* __restrict__ x, const sum_t<T>* __restrict__ acc, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    x[e] = narrow<T>(acc[e]);
}

std::string shape_str(const TensorArg& t) {
  std::string s = "[";
  for (int d = 0; d < t.ndim; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

[[noreturn]] void shape_error(const char* op, const std::string& what) {
  throw ShapeError(std::string(op) + " on CUDA: " + what);
}

// out and `other` (named `name`) must have equal sizes in every dim but `dim`.
void require_same_outside_dim(const char* op, const TensorArg& out, const TensorArg& other, const char* name, int dim) {
  for (int d = 0; d < out.ndim; ++d)
    if (d != dim && out.sizes[d] != other.sizes[d])
      shape_error(op, "output " + shape_str(out) + " and " + name + " " + shape_str(other) + " differ at dim " +
                          std::to_string(d));
}

void check_common(const char* op, const TensorArg& out, const TensorArg& other, const char* other_name,
                  const TensorArg& index, int dim) {
  if (out.ndim < 1 || dim < 0 || dim >= out.ndim)
    shape_error(op, "dim " + std::to_string(dim) + " is not a dim of the " + std::to_string(out.ndim) +
                        "-D output (pass 0-dim tensors as 1-element vectors)");
  if (other.ndim != out.ndim)
    shape_error(op, std::string(other_name) + " " + shape_str(other) + " and output " + shape_str(out) +
                        " must have the same number of dims");
  require_contiguous(out, op, "output");
  require_dtype(other, out.dtype, op, other_name);
  require_contiguous(index, op, "index");
  require_dtype(index, kInt64, op, "index");
}

void check_flag(const char* op, long long* flag, int dim, int64_t bound, cudaStream_t stream) {
  int64_t bad = 0;
  if (read_error_flag(flag, stream, op, bad))
    throw IndexError(std::string(op) + ": index " + std::to_string(bad) + " is out of bounds for dimension " +
                     std::to_string(dim) + " with size " + std::to_string(bound));
}

// out and index_or_out share the iteration shape; B (in) is read at the indexed position.
void launch_gather(const char* op, const TensorArg& out, const TensorArg& in, const TensorArg& index, int dim,
                   bool per_element, void* flag_scratch, cudaStream_t stream) {
  const int64_t n = out.numel();
  if (n == 0) return;
  if (!flag_scratch) throw ValueError(std::string(op) + " on CUDA: flag_scratch (kDeviceErrorFlagBytes) is required");
  long long* flag = static_cast<long long*>(flag_scratch);
  const AxisMap m = coalesce(out.sizes, out.strides, in.strides, out.ndim, dim, in.sizes[dim]);
  clear_error_flag(flag, stream, op);
  auto launch = [&]<typename B>() {
    auto* o = static_cast<B*>(out.data);
    const auto* i = static_cast<const B*>(in.data);
    const auto* ix = static_cast<const int64_t*>(index.data);
    if (per_element) RT_LAUNCH(grid_for(n), kBlock, stream, gather_kernel<B, true>)(o, i, ix, m, n, flag);
    else RT_LAUNCH(grid_for(n), kBlock, stream, gather_kernel<B, false>)(o, i, ix, m, n, flag);
  };
  switch (element_size(out.dtype)) {
    case 1: launch.template operator()<uint8_t>(); break;
    case 2: launch.template operator()<uint16_t>(); break;
    case 4: launch.template operator()<uint32_t>(); break;
    default: launch.template operator()<unsigned long long>(); break;
  }
  check_launch(op);
  check_flag(op, flag, dim, in.sizes[dim], stream);
}

}  // namespace

void index_select(const TensorArg& out, const TensorArg& in, const TensorArg& index, int dim, void* flag_scratch,
                  cudaStream_t stream) {
  const char* op = "index_select";
  check_common(op, out, in, "input", index, dim);
  if (index.ndim != 1 || index.sizes[0] != out.sizes[dim])
    shape_error(op, "index " + shape_str(index) + " must be 1-D with output.size(" + std::to_string(dim) + ") = " +
                        std::to_string(out.sizes[dim]) + " values");
  require_same_outside_dim(op, out, in, "input", dim);
  launch_gather(op, out, in, index, dim, false, flag_scratch, stream);
}

void gather(const TensorArg& out, const TensorArg& in, const TensorArg& index, int dim, void* flag_scratch,
            cudaStream_t stream) {
  const char* op = "gather";
  check_common(op, out, in, "input", index, dim);
  bool fits = index.ndim == out.ndim;
  for (int d = 0; fits && d < out.ndim; ++d)
    fits = index.sizes[d] == out.sizes[d] && (d == dim || index.sizes[d] <= in.sizes[d]);
  if (!fits)
    shape_error(op, "index " + shape_str(index) + " must have the output's shape " + shape_str(out) +
                        " and fit in input " + shape_str(in) + " outside dim " + std::to_string(dim));
  launch_gather(op, out, in, index, dim, true, flag_scratch, stream);
}

size_t scatter_add_scratch_bytes(const TensorArg& out) {
  size_t acc = 0;
  ew::visit_storage_host(out.dtype, [&]<typename T>() {
    if constexpr (!kAddsInPlace<T>) acc = size_t(out.numel()) * sizeof(sum_t<T>);
  });
  return kDeviceErrorFlagBytes + acc;
}

void scatter_add(const TensorArg& out, const TensorArg& src, const TensorArg& index, int dim, ScatterIndex mode,
                 void* scratch, cudaStream_t stream) {
  const bool per_element = mode == ScatterIndex::PerElement;
  const char* op = per_element ? "scatter_add" : "index_add";
  check_common(op, out, src, "src", index, dim);
  const TensorArg& iter = per_element ? index : src;
  if (per_element) {
    bool fits = index.ndim == out.ndim;
    for (int d = 0; fits && d < out.ndim; ++d)
      fits = index.sizes[d] <= src.sizes[d] && (d == dim || index.sizes[d] <= out.sizes[d]);
    if (!fits)
      shape_error(op, "index " + shape_str(index) + " must fit in src " + shape_str(src) + " and in output " +
                          shape_str(out) + " outside dim " + std::to_string(dim));
  } else {
    if (index.ndim != 1 || index.sizes[0] != src.sizes[dim])
      shape_error(op, "index " + shape_str(index) + " must be 1-D with src.size(" + std::to_string(dim) + ") = " +
                          std::to_string(src.sizes[dim]) + " values");
    require_same_outside_dim(op, out, src, "src", dim);
  }
  const int64_t n = iter.numel(), total = out.numel();
  if (n == 0 || total == 0) return;
  if (!scratch) throw ValueError(std::string(op) + " on CUDA: scratch of scatter_add_scratch_bytes() is required");
  long long* flag = static_cast<long long*>(scratch);
  int64_t out_strides[kMaxDims] = {}, step = 1;  // the accumulator is contiguous
  for (int d = out.ndim - 1; d >= 0; --d) {
    out_strides[d] = step;
    step *= out.sizes[d];
  }
  const AxisMap m = coalesce(iter.sizes, src.strides, out_strides, out.ndim, dim, out.sizes[dim]);
  clear_error_flag(flag, stream, op);
  ew::visit_storage_host(out.dtype, [&]<typename T>() {
    using S = sum_t<T>;
    S* acc = kAddsInPlace<T> ? static_cast<S*>(out.data)
                             : reinterpret_cast<S*>(static_cast<char*>(scratch) + kDeviceErrorFlagBytes);
    if constexpr (!kAddsInPlace<T>) {
      RT_LAUNCH(grid_for(total), kBlock, stream, widen_kernel<T>)(acc, static_cast<const T*>(out.data), total);
      check_launch(op);
    }
    const auto* s = static_cast<const T*>(src.data);
    const auto* ix = static_cast<const int64_t*>(index.data);
    if (per_element) RT_LAUNCH(grid_for(n), kBlock, stream, scatter_add_kernel<T, true>)(acc, s, ix, m, n, flag);
    else RT_LAUNCH(grid_for(n), kBlock, stream, scatter_add_kernel<T, false>)(acc, s, ix, m, n, flag);
    check_launch(op);
    if constexpr (!kAddsInPlace<T>) {
      RT_LAUNCH(grid_for(total), kBlock, stream, narrow_kernel<T>)(static_cast<T*>(out.data), acc, total);
      check_launch(op);
    }
  });
  check_flag(op, flag, dim, out.sizes[dim], stream);
}

}  // namespace rt::cuda_kernels
