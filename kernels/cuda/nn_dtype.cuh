// kernels/cuda/nn_dtype.cuh — element loads/stores and floating dtype dispatch for the NN
// launchers (softmax, norms, losses, embedding, dropout, pooling, im2col). Private to kernels/cuda/*.cu.
//
//   visit_floating(out.dtype, "softmax", [&]<typename T>() { RT_LAUNCH(grid, block, stream, my_kernel<T>)(...); });
//   const float v = to_float(x[i]);  store(&y[i], v);   // half types computed in float
//
// T is the storage type (__half, __nv_bfloat16, float, double); acc_t<T> is the type rows are
// accumulated in: double for double, float otherwise (the CPU engine's rule).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "cuda/tensor_arg.h"
#include "rt/error.h"

namespace rt::cuda_kernels {

template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

__device__ __forceinline__ float to_acc(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ double to_acc(double v) { return v; }

template <typename A>
__device__ __forceinline__ A neg_infinity() { return A(-INFINITY); }

// Round-to-nearest-even, as rt::Half / rt::BFloat16 do on the CPU.
template <typename T, typename V>
__device__ __forceinline__ T from_acc(V v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(float(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(float(v));
  else return T(v);
}

// Calls f.template operator()<T>() for a floating dtype; rt::DTypeError naming `op` otherwise.
template <typename F>
void visit_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case kFloat16: return f.template operator()<__half>();
    case kBFloat16: return f.template operator()<__nv_bfloat16>();
    case kFloat32: return f.template operator()<float>();
    case kFloat64: return f.template operator()<double>();
    default:
      throw DTypeError(std::string(op) + " on CUDA: dtype " + std::string(dtype_name(t)) +
                       " is not supported; expected float16, bfloat16, float32 or float64 (convert with .to(rt::kFloat32))");
  }
}

// Launchers take contiguous tensors; the engine makes them so (a view costs one copy).
inline void require_contiguous(const TensorArg& t, const char* op, const char* name) {
  if (!t.is_contiguous())
    throw ValueError(std::string(op) + " on CUDA: " + name +
                     " must be contiguous; call .contiguous() on it before dispatching to the kernel");
}

inline void require_dtype(const TensorArg& t, ScalarType want, const char* op, const char* name) {
  if (t.dtype != want)
    throw DTypeError(std::string(op) + " on CUDA: " + name + " has dtype " + std::string(dtype_name(t.dtype)) +
                     ", expected " + std::string(dtype_name(want)));
}

}  // namespace rt::cuda_kernels
