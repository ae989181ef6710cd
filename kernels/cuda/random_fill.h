// kernels/cuda/random_fill.h — uniform_/normal_ fills on CUDA from the engine's Philox stream.
//
//   const uint64_t counters = rt::cuda_kernels::random_fill_counters(t.numel(), t.dtype);
//   const uint64_t offset = rt::default_generator().reserve(counters);
//   rt::cuda_kernels::fill_uniform(t, 0.0, 1.0, rt::default_generator().seed(), offset, stream);
//
// The same scheme as the CPU engine (engine/src/ops/random.cpp, Note [Random streams]): element i
// of the contiguous output takes word i % k of Philox counter offset + i / k under key = seed, k = 4
// (2 for float64). So after rt::manual_seed(s) the same sequence of calls gives
//   - fill_uniform: bit-identical values on CPU and CUDA (the arithmetic is exact or a single
//     IEEE-rounded double operation, done with __dadd_rn/__dmul_rn so it is never contracted);
//   - fill_normal: the same Box-Muller pairs, but log/sin/cos come from CUDA's libdevice instead
//     of glibc, so values agree to a few ulp of float (float64 to a few ulp of double), not bit for bit.
// out is contiguous, float16, bfloat16, float32 or float64. The caller must reserve exactly
// random_fill_counters() counters from the generator so later calls stay in step with the CPU.
#pragma once
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

uint64_t random_fill_counters(int64_t n, ScalarType dtype);

void fill_uniform(const TensorArg& out, double low, double high, uint64_t seed, uint64_t offset, cudaStream_t stream);
void fill_normal(const TensorArg& out, double mean, double stddev, uint64_t seed, uint64_t offset, cudaStream_t stream);

}  // namespace rt::cuda_kernels
