// kernels/cuda/elementwise_loop.cuh — the device-side machinery of the elementwise launchers
// (binary.cu, unary.cu, unary_backward.cu, ternary.cu, copy.cu). Private to kernels/cuda/*.cu.
//
//   struct Mul { template <class C> __device__ C operator()(C a, C b) const { return a * b; } };
//   ew::visit_compute(out.dtype, "mul", [&]<typename C>() {
//     ew::launch<C, 2>("mul", out, {&a, &b}, out.dtype, Mul{}, stream);
//   });
//
// Contract of ew::launch<C, NIN>(name, out, {&inputs...}, compute, f, stream):
//  * every input has out's sizes (the engine expands broadcast inputs with stride 0);
//  * each input element is loaded from its own dtype, rounded to `compute` (as the CPU engine's
//    convert(x, compute) would) and widened to the register type C = compute_type(compute):
//    float for float16/bfloat16/float32, double for float64, int64_t for the integer types
//    and bool (narrow integer results wrap on the store, as two's complement arithmetic does);
//  * f(C...) returns C or bool; the result is converted to out.dtype on the store.
// Paths, fastest first: 16-byte vector loads when every operand is contiguous, of the storage
// type of `compute`, and 16-byte aligned; a typed flat loop when contiguous and same-typed; a
// generic strided loop with per-operand dtype conversion otherwise (dims coalesced first).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <array>
#include <string>
#include <type_traits>

#include "cuda/launch.h"
#include "cuda/pack.cuh"
#include "cuda/tensor_arg.h"
#include "rt/error.h"
#include "rt/scalar.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels::ew {

// ---- storage types and conversions ------------------------------------------------------
template <ScalarType S> struct storage;
template <> struct storage<kBool> { using type = bool; };
template <> struct storage<kUInt8> { using type = uint8_t; };
template <> struct storage<kInt32> { using type = int32_t; };
template <> struct storage<kInt64> { using type = int64_t; };
template <> struct storage<kFloat16> { using type = __half; };
template <> struct storage<kBFloat16> { using type = __nv_bfloat16; };
template <> struct storage<kFloat32> { using type = float; };
template <> struct storage<kFloat64> { using type = double; };

template <typename S>
inline constexpr ScalarType dtype_of_storage = std::is_same_v<S, bool> ? kBool
                                             : std::is_same_v<S, uint8_t> ? kUInt8
                                             : std::is_same_v<S, int32_t> ? kInt32
                                             : std::is_same_v<S, int64_t> ? kInt64
                                             : std::is_same_v<S, __half> ? kFloat16
                                             : std::is_same_v<S, __nv_bfloat16> ? kBFloat16
                                             : std::is_same_v<S, float> ? kFloat32
                                                                        : kFloat64;

// Storage type S -> register type.
template <typename S>
using reg_t = std::conditional_t<std::is_same_v<S, __half> || std::is_same_v<S, __nv_bfloat16> || std::is_same_v<S, float>,
                                 float, std::conditional_t<std::is_same_v<S, double>, double, int64_t>>;

// Converts a storage value to register type C (C may be bool: nonzero -> true).
template <typename C, typename S>
__device__ __forceinline__ C to_reg(S v) {
  if constexpr (std::is_same_v<S, __half>) {
    const float f = __half2float(v);
    if constexpr (std::is_same_v<C, bool>) return f != 0.f;
    else return C(f);
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    const float f = __bfloat162float(v);
    if constexpr (std::is_same_v<C, bool>) return f != 0.f;
    else return C(f);
  } else if constexpr (std::is_same_v<C, bool>) {
    return v != S(0);
  } else {
    return C(v);
  }
}

// Converts a register value (float, double, int64_t or bool) to storage type S, rounding to
// nearest even for the half types and wrapping for narrow integers.
template <typename S, typename R>
__device__ __forceinline__ S from_reg(R v) {
  if constexpr (std::is_same_v<S, __half>) return __float2half_rn(float(v));
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
  else if constexpr (std::is_same_v<S, bool>) return v != R(0);
  else if constexpr (std::is_integral_v<S> && std::is_floating_point_v<R>) return S(int64_t(v));
  else return S(v);
}

// Calls f.template operator()<S>() with the storage type of dtype t (visit_storage_host on the host).
template <typename F>
__device__ __forceinline__ decltype(auto) visit_storage(ScalarType t, F&& f) {
  switch (t) {
    case kBool: return f.template operator()<bool>();
    case kUInt8: return f.template operator()<uint8_t>();
    case kInt32: return f.template operator()<int32_t>();
    case kInt64: return f.template operator()<int64_t>();
    case kFloat16: return f.template operator()<__half>();
    case kBFloat16: return f.template operator()<__nv_bfloat16>();
    case kFloat32: return f.template operator()<float>();
    case kFloat64: break;
  }
  return f.template operator()<double>();
}

template <typename F>
decltype(auto) visit_storage_host(ScalarType t, F&& f) {
  switch (t) {
    case kBool: return f.template operator()<bool>();
    case kUInt8: return f.template operator()<uint8_t>();
    case kInt32: return f.template operator()<int32_t>();
    case kInt64: return f.template operator()<int64_t>();
    case kFloat16: return f.template operator()<__half>();
    case kBFloat16: return f.template operator()<__nv_bfloat16>();
    case kFloat32: return f.template operator()<float>();
    case kFloat64: break;
  }
  return f.template operator()<double>();
}

template <typename C>
__device__ __forceinline__ C load_as(const char* p, ScalarType src) {
  return visit_storage(src, [p]<typename S>() { return to_reg<C>(*reinterpret_cast<const S*>(p)); });
}

template <typename R>
__device__ __forceinline__ void store_as(char* p, ScalarType dst, R v) {
  visit_storage(dst, [p, v]<typename S>() { *reinterpret_cast<S*>(p) = from_reg<S>(v); });
}

// v (already of register type C) rounded to dtype `to`, as converting to that dtype and back.
template <typename C>
__device__ __forceinline__ C round_to(C v, ScalarType to) {
  return visit_storage(to, [v]<typename S>() -> C {
    if constexpr (std::is_same_v<C, reg_t<S>> || std::is_same_v<C, bool>) return C(to_reg<C>(from_reg<S>(v)));
    else return v;  // a wider type than C: nothing to round
  });
}

// Register type of a compute dtype, as a host-side visitor: f.template operator()<C>().
template <typename F>
decltype(auto) visit_compute(ScalarType compute, F&& f) {
  switch (compute) {
    case kFloat16:
    case kBFloat16:
    case kFloat32: return f.template operator()<float>();
    case kFloat64: return f.template operator()<double>();
    default: break;
  }
  return f.template operator()<int64_t>();
}

inline std::string dtype_str(ScalarType t) { return std::string(dtype_name(t)); }

// A scalar converted to dtype `to` and widened to register type C, on the host: what the CPU
// engine computes with after converting a wrapped number to the op's dtype.
template <typename C>
C scalar_as(const Scalar& s, ScalarType to) {
  switch (to) {
    case kFloat16: return C(__half2float(__float2half_rn(float(s.to_double()))));
    case kBFloat16: return C(__bfloat162float(__float2bfloat16_rn(float(s.to_double()))));
    case kFloat32: return C(float(s.to_double()));
    case kFloat64: return C(s.to_double());
    case kBool: return C(s.to<bool>());
    case kUInt8: return C(s.to<uint8_t>());
    case kInt32: return C(s.to<int32_t>());
    case kInt64: break;
  }
  return C(s.to<int64_t>());
}

// ---- offsets ------------------------------------------------------------------------------
// Byte offsets of N operands for a linear (row-major) element index over coalesced dims.
template <int N>
struct OffsetCalc {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][N] = {};  // bytes

  __device__ __forceinline__ void get(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (ndim == 1) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = i * strides[0][k];
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t size = sizes[d];
      const int64_t q = i / size, idx = i - q * size;
      i = q;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[d][k];
    }
  }
};

// Builds the calculator for operands sharing `shape`: drops size-1 dims and merges neighbouring
// dims that are contiguous with each other in every operand.
template <int N>
OffsetCalc<N> make_offset_calc(const TensorArg& shape, const TensorArg* const* ops) {
  OffsetCalc<N> c;
  for (int d = 0; d < shape.ndim; ++d) {
    if (shape.sizes[d] == 1) continue;
    bool merge = c.ndim > 0;
    for (int k = 0; k < N && merge; ++k) {
      const int64_t es = int64_t(element_size(ops[k]->dtype));
      merge = c.strides[c.ndim - 1][k] == ops[k]->strides[d] * es * shape.sizes[d];
    }
    if (merge) {
      c.sizes[c.ndim - 1] *= shape.sizes[d];
      for (int k = 0; k < N; ++k) c.strides[c.ndim - 1][k] = ops[k]->strides[d] * int64_t(element_size(ops[k]->dtype));
    } else {
      c.sizes[c.ndim] = shape.sizes[d];
      for (int k = 0; k < N; ++k) c.strides[c.ndim][k] = ops[k]->strides[d] * int64_t(element_size(ops[k]->dtype));
      ++c.ndim;
    }
  }
  if (c.ndim == 0) {  // a single element
    c.ndim = 1;
    c.sizes[0] = 1;
  }
  return c;
}

// ---- kernels ------------------------------------------------------------------------------
template <int NIN>
struct Operands {
  char* ptr[NIN + 1];          // out first
  ScalarType dtype[NIN + 1];
};

template <typename C, int NIN, typename F>
__device__ __forceinline__ auto apply(const F& f, const C (&v)[NIN]) {
  if constexpr (NIN == 1) return f(v[0]);
  else if constexpr (NIN == 2) return f(v[0], v[1]);
  else if constexpr (NIN == 3) return f(v[0], v[1], v[2]);
  else return f(v[0], v[1], v[2], v[3]);
}

template <typename C, int NIN, typename F>
__global__ void strided_kernel(Operands<NIN> ops, OffsetCalc<NIN + 1> calc, ScalarType compute, int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[NIN + 1];
    calc.get(i, off);
    C v[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) {
      if (compute == kBool) {  // nonzero in the input's own type: 0.5 and NaN are true, as on the CPU
        v[k] = C(load_as<bool>(ops.ptr[k + 1] + off[k + 1], ops.dtype[k + 1]));
      } else {
        v[k] = load_as<C>(ops.ptr[k + 1] + off[k + 1], ops.dtype[k + 1]);
        if (ops.dtype[k + 1] != compute) v[k] = round_to(v[k], compute);
      }
    }
    store_as(ops.ptr[0] + off[0], ops.dtype[0], apply<C, NIN>(f, v));
  }
}

template <typename S, int NIN>
struct TypedInputs {
  const S* p[NIN];
};

// Contiguous operands, inputs all of storage type S, out of storage type O.
template <typename C, typename S, typename O, int NIN, typename F>
__global__ void flat_kernel(O* out, TypedInputs<S, NIN> in, int64_t n, F f) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    C v[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) v[k] = to_reg<C>(in.p[k][i]);
    out[i] = from_reg<O>(apply<C, NIN>(f, v));
  }
}

// As flat_kernel with 16-byte loads of the inputs: V = 16 / sizeof(S) elements per thread and
// step; the last n % V elements are done one by one.
template <typename C, typename S, typename O, int NIN, typename F>
__global__ void vector_kernel(O* out, TypedInputs<S, NIN> in, int64_t n, F f) {
  constexpr int V = 16 / int(sizeof(S));
  const int64_t nvec = n / V;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t j = tid; j < nvec; j += stride) {
    Pack<S, V> x[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) x[k] = reinterpret_cast<const Pack<S, V>*>(in.p[k])[j];
    Pack<O, V> y;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      C v[NIN];
#pragma unroll
      for (int k = 0; k < NIN; ++k) v[k] = to_reg<C>(x[k].v[e]);
      y.v[e] = from_reg<O>(apply<C, NIN>(f, v));
    }
    reinterpret_cast<Pack<O, V>*>(out)[j] = y;
  }
  for (int64_t i = nvec * V + tid; i < n; i += stride) {
    C v[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) v[k] = to_reg<C>(in.p[k][i]);
    out[i] = from_reg<O>(apply<C, NIN>(f, v));
  }
}

// ---- host side ----------------------------------------------------------------------------
inline bool aligned16(const void* p, int64_t bytes_per_vec) {
  return (reinterpret_cast<uintptr_t>(p) % uintptr_t(bytes_per_vec)) == 0;
}

inline void check_same_shape(const char* name, const TensorArg& out, const TensorArg& in, int index) {
  bool same = out.ndim == in.ndim;
  for (int d = 0; same && d < out.ndim; ++d) same = out.sizes[d] == in.sizes[d];
  if (!same)
    throw ShapeError(std::string(name) + " on CUDA: input " + std::to_string(index) +
                     " does not have the output's shape; the caller must expand inputs to the output shape "
                     "(stride 0 in broadcast dims) before launching");
}

// The typed fast paths: every operand contiguous and every input of the storage type of compute.
template <typename C, typename S, typename O, int NIN, typename F>
void launch_typed(const char* name, const TensorArg& out, const TensorArg* const* in, int64_t n, const F& f,
                  cudaStream_t stream) {
  TypedInputs<S, NIN> ti;
  constexpr int V = 16 / int(sizeof(S));
  bool vec = V > 1 && aligned16(out.data, int64_t(sizeof(O)) * V);
  for (int k = 0; k < NIN; ++k) {
    ti.p[k] = static_cast<const S*>(in[k]->data);
    vec = vec && aligned16(in[k]->data, 16);
  }
  O* o = static_cast<O*>(out.data);
  if (vec) {
    RT_LAUNCH(grid_for(n / V + 1), kBlock, stream, vector_kernel<C, S, O, NIN>)(o, ti, n, f);
  } else {
    RT_LAUNCH(grid_for(n), kBlock, stream, flat_kernel<C, S, O, NIN>)(o, ti, n, f);
  }
  check_launch(name);
}

template <typename C, int NIN, typename F>
void launch(const char* name, const TensorArg& out, const std::array<const TensorArg*, NIN>& inputs,
            ScalarType compute, const F& f, cudaStream_t stream) {
  static_assert(NIN >= 1 && NIN <= 4, "ew::launch takes one to four inputs");
  const TensorArg* const* in = inputs.data();
  for (int i = 0; i < NIN; ++i) check_same_shape(name, out, *in[i], i);
  const int64_t n = out.numel();
  if (n == 0) return;

  bool typed = out.is_contiguous() && (out.dtype == compute || out.dtype == kBool);
  for (int i = 0; i < NIN; ++i) typed = typed && in[i]->dtype == compute && in[i]->is_contiguous();
  if (typed) {
    visit_storage_host(compute, [&]<typename S>() {
      if constexpr (std::is_same_v<reg_t<S>, C>) {
        if (out.dtype == compute) launch_typed<C, S, S, NIN>(name, out, in, n, f, stream);
        else launch_typed<C, S, bool, NIN>(name, out, in, n, f, stream);
      } else {
        throw DTypeError(std::string(name) + " on CUDA: internal error: register type does not match " +
                         dtype_str(compute));
      }
    });
    return;
  }
  const TensorArg* all[NIN + 1];
  all[0] = &out;
  Operands<NIN> ops;
  ops.ptr[0] = static_cast<char*>(out.data);
  ops.dtype[0] = out.dtype;
  for (int i = 0; i < NIN; ++i) {
    all[i + 1] = in[i];
    ops.ptr[i + 1] = static_cast<char*>(in[i]->data);
    ops.dtype[i + 1] = in[i]->dtype;
  }
  const OffsetCalc<NIN + 1> calc = make_offset_calc<NIN + 1>(out, all);
  RT_LAUNCH(grid_for(n), kBlock, stream, strided_kernel<C, NIN>)(ops, calc, compute, n, f);
  check_launch(name);
}

}  // namespace rt::cuda_kernels::ew
