// kernels/cuda/reduce.h — reductions on CUDA: sum, mean, prod, max/min (values, indices or
// both), argmax/argmin, var/std, all/any, over a set of dims or over all elements.
//
//   using namespace rt::cuda_kernels;
//   const uint32_t dims = 1u << 1;                                   // reduce over dim 1
//   const size_t bytes = reduce_scratch_bytes(ReduceOp::Sum, in, dims);
//   void* scratch = bytes ? allocator.raw_alloc(bytes) : nullptr;    // caller-owned, device memory
//   reduce(ReduceOp::Sum, out, in, dims, /*correction=*/0, scratch, bytes, stream);
//
// Contract:
//  * dim_mask has bit d set for each reduced dim d of `in`; 0 reduces over all elements.
//  * out is contiguous with one element per result in row-major order of the kept dims, so
//    the same buffer serves keepdim=true and keepdim=false (only its sizes differ).
//  * dtypes (as the CPU engine's reduce*.cpp, sum.cpp): Sum and Prod write in's dtype for
//    floating in and int64 otherwise; Mean, Var and Std need floating in and write its dtype;
//    Max and Min write in's dtype; ArgMax and ArgMin write int64; All and Any write bool.
//    Half types accumulate in float, float64 in double, integers (sum, prod) in int64.
//  * Max, Min, ArgMax, ArgMin propagate NaN (the first NaN wins) and break ties by the lowest
//    index; the index counts along the reduced dims in row-major order (the flat index for a
//    full reduction). Var/Std use Welford's update and divide by max(0, n - correction).
//  * Scratch: results are bitwise reproducible for a given shape (no atomics). A few long
//    reductions are cut into splits written to scratch and merged by a second kernel;
//    reduce_scratch_bytes says how many bytes a call needs (0: none, scratch may be null).
//  * Errors: DTypeError for an unsupported or mismatched dtype, ShapeError for a reduction
//    without identity (max, min, arg*) over zero elements or an out of the wrong size,
//    ValueError for scratch smaller than reduce_scratch_bytes.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

enum class ReduceOp { Sum, Mean, Prod, Max, Min, ArgMax, ArgMin, Var, Std, All, Any };

size_t reduce_scratch_bytes(ReduceOp op, const TensorArg& in, uint32_t dim_mask);

// correction is used by Var and Std only (1: Bessel's correction, PyTorch's default).
void reduce(ReduceOp op, const TensorArg& out, const TensorArg& in, uint32_t dim_mask, int64_t correction,
            void* scratch, size_t scratch_bytes, cudaStream_t stream);

// max(dim)/min(dim): values (in's dtype) and indices (int64) along one dim; scratch as for
// reduce_scratch_bytes(ReduceOp::ArgMax or ArgMin, in, 1u << dim).
void reduce_with_indices(bool is_max, const TensorArg& values, const TensorArg& indices, const TensorArg& in, int dim,
                         void* scratch, size_t scratch_bytes, cudaStream_t stream);

const char* reduce_op_name(ReduceOp op);  // "sum", "mean", ...

}  // namespace rt::cuda_kernels
