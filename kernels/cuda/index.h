// kernels/cuda/index.h — indexing along one dim on CUDA: index_select, gather, and the
// scatter-add that is the backward of both (scatter_add, index_add).
//
//   // out[o, k, i] = in[o, index[k], i]                     (index 1-D, K values)
//   rt::cuda_kernels::index_select(out, in, index, dim, flag_scratch, stream);
//   // out[p] = in[p with p[dim] replaced by index[p]]        (out and index of one shape)
//   rt::cuda_kernels::gather(out, in, index, dim, flag_scratch, stream);
//   // out[p with p[dim] replaced by index[p]] += src[p]      (p over index's shape)
//   void* scratch = alloc(rt::cuda_kernels::scatter_add_scratch_bytes(out));
//   rt::cuda_kernels::scatter_add(out, src, index, dim, ScatterIndex::PerElement, scratch, stream);
//   // out[o, index[k], i] += src[o, k, i]                    (index_add: index 1-D over src's dim)
//   rt::cuda_kernels::scatter_add(out, src, index, dim, ScatterIndex::AlongDim, scratch, stream);
//
// Contract:
//  * dim is a dim of out (0 <= dim < out.ndim); every operand has out's rank (a 0-dim tensor is
//    passed as a 1-element vector). At most kMaxDims dims.
//  * index: int64, contiguous. For gather its sizes are out's; for index_select it is 1-D with
//    out.sizes[dim] values; for scatter_add (PerElement) it has the iteration shape; for
//    index_add (AlongDim) it is 1-D with src.sizes[dim] values.
//  * Shapes: gather needs index.sizes[d] <= in.sizes[d] for d != dim; index_select needs
//    out.sizes[d] == in.sizes[d] for d != dim; scatter_add iterates over index's shape, which
//    must fit in src (every dim) and in out (every dim but `dim`); index_add iterates over src's
//    shape, which must equal out's except at `dim`. ShapeError otherwise.
//  * Outputs are contiguous (ValueError otherwise); `in` and `src` may have any strides (stride
//    0 too), so views need no copy first.
//  * dtypes: gather and index_select copy elements as bytes, any of the 8 dtypes (out's dtype
//    equals in's). scatter_add accepts all 8 (out's dtype equals src's): float32 and float64 add
//    with atomicAdd in place and int64 with atomicAdd on unsigned long long (two's complement
//    wraps, as the CPU's int64 does); float16/bfloat16 add into a float scratch, bool, uint8 and
//    int32 into an int64 scratch, rounded or wrapped into out once at the end (bool: any true).
//    scatter_add_scratch_bytes(out) says how much scratch a call needs (always at least the
//    error flag's kDeviceErrorFlagBytes).
//  * Errors: an index outside [0, size of the indexed dim) throws rt::IndexError naming the op,
//    the index, the dim and its size ("gather: index 5 is out of bounds for dimension 1 with
//    size 4"), found on the device with the flag of device_error_flag.h: every call therefore
//    waits for its stream once. Out-of-range entries write nothing.
//  * Determinism: gather and index_select are exact copies. Floating scatter-adds use atomics,
//    so the order in which values meet at one output element is not fixed: sums can differ from
//    the CPU's in-order sums (and between runs) in the last bits. Integer and bool sums are
//    exact and reproducible. The half types round once at the end, where the CPU rounds after
//    every addition. float32 atomics on global memory flush denormal results to zero (CUDA's
//    documented behaviour), which the CPU does not.
#pragma once
#include <cstddef>

#include "cuda/device_error_flag.h"
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

// How a scatter-add finds the index of an iteration position p.
enum class ScatterIndex {
  PerElement,  // index[p]: scatter_add (index has the iteration shape)
  AlongDim,    // index[p[dim]]: index_add (index is 1-D)
};

void index_select(const TensorArg& out, const TensorArg& in, const TensorArg& index, int dim, void* flag_scratch,
                  cudaStream_t stream);

void gather(const TensorArg& out, const TensorArg& in, const TensorArg& index, int dim, void* flag_scratch,
            cudaStream_t stream);

size_t scatter_add_scratch_bytes(const TensorArg& out);

void scatter_add(const TensorArg& out, const TensorArg& src, const TensorArg& index, int dim, ScatterIndex mode,
                 void* scratch, cudaStream_t stream);

}  // namespace rt::cuda_kernels
