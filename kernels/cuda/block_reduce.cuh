// kernels/cuda/block_reduce.cuh — warp and block all-reduces for the row-wise NN kernels
// (softmax, layer_norm, batch_norm, cross_entropy). Private to kernels/cuda/*.cu.
//
//   RT_SHARED(smem, float[32]);
//   const float total = block_all_reduce(partial, SumOp{}, smem);   // every thread gets the sum
//
// Contract: blockDim.x is a multiple of 32 (at most 1024) and every thread of the block (warp,
// for warp_all_reduce) calls the function, so no thread may return early before it.
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

namespace rt::cuda_kernels {

struct SumOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
  template <typename T>
  __device__ __forceinline__ static T identity() { return T(0); }
};

// NaN-propagating max (fmax would drop NaNs; the CPU's std::max keeps the first NaN it meets,
// and a NaN reaches every output through the sums anyway).
struct MaxOp {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return (a != a || a > b) ? a : b; }
  template <typename T>
  __device__ __forceinline__ static T identity() {
    static_assert(std::is_floating_point_v<T>, "MaxOp reduces float or double");
    return T(-INFINITY);
  }
};

template <typename T, typename Op>
__device__ __forceinline__ T warp_all_reduce(T v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// `smem` holds at least 32 values; it may be reused right after the call returns. Each warp
// reduces its lanes, then every warp reduces the warps' partials itself with shuffles (one
// shared-memory read per thread; the xor butterfly gives all lanes the same value).
template <typename T, typename Op>
__device__ __forceinline__ T block_all_reduce(T v, Op op, T* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_all_reduce(v, op);
  __syncthreads();  // smem may still be read by a previous call
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  return warp_all_reduce(lane < warps ? smem[lane] : Op::template identity<T>(), op);
}

// A group of threads reducing one row: a warp (kWarp) or the whole block.
template <bool kWarp>
struct RowGroup {
  __device__ __forceinline__ static int rank() { return kWarp ? int(threadIdx.x % 32) : int(threadIdx.x); }
  __device__ __forceinline__ static int size() { return kWarp ? 32 : int(blockDim.x); }
  __device__ __forceinline__ static int64_t row(int rows_per_block) {
    return kWarp ? int64_t(blockIdx.x) * rows_per_block + threadIdx.x / 32 : int64_t(blockIdx.x);
  }
  template <typename T, typename Op>
  __device__ __forceinline__ static T all_reduce(T v, Op op, T* smem) {
    if constexpr (kWarp) return warp_all_reduce(v, op);
    else return block_all_reduce(v, op, smem);
  }
};

}  // namespace rt::cuda_kernels
