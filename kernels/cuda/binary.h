// kernels/cuda/binary.h — elementwise binary ops on CUDA: arithmetic, pow, maximum/minimum,
// comparisons and logical ops, with a tensor or a scalar as second operand.
//
//   using namespace rt::cuda_kernels;
//   binary(BinaryOp::Add, out, a, b, /*alpha=*/1.0, stream);                // out = a + 1.0 * b
//   compare(CompareOp::Lt, mask, a, b, /*compute=*/rt::kFloat32, stream);   // mask (bool) = a < b
//   binary_scalar(BinaryOp::Sub, out, x, rt::Scalar(1.0), /*scalar_first=*/true, 1.0, stream);  // 1 - x
//
// Contract (see elementwise_loop.cuh): inputs have out's sizes (broadcast dims expanded with
// stride 0) and may have any dtype; each is converted on load to the compute dtype, which is
// out.dtype for binary/binary_scalar (the caller's result_type; float for div of integers) and
// explicit for comparisons (result_type of the operands; out is bool). Scalars are rounded to
// the compute dtype first, as the CPU engine's wrapped numbers are. Semantics follow
// engine/src/ops/arith.cpp, pow_clamp.cpp and compare.cpp: div is true division, integer pow
// wraps and gives 0 for negative exponents unless |base| == 1, maximum/minimum propagate NaN,
// add/mul on bool are or/and. Errors: DTypeError for div with an integer out, sub, pow,
// remainder, fmod, floor_divide or trunc division on bool, and dtypes outside the 8 engine dtypes.
#pragma once
#include "cuda/tensor_arg.h"
#include "rt/scalar.h"

namespace rt::cuda_kernels {

// Lerp is a + alpha * (b - a) (lerp_ with a scalar weight = alpha). Remainder (Python's %), Fmod
// (C's fmod), FloorDivide (Python's //) and TruncDivide (div with rounding_mode "trunc") use
// PyTorch's formulas (engine/src/ops/divmod.cpp); an integer divisor of 0 gives 0 here, never a
// trap: the engine throws ZeroDivisionError before it launches one.
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Lerp,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  Remainder,
  Fmod,
  FloorDivide,
  TruncDivide
};
enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge };

// out = a op b; alpha scales b for Add and Sub (a + alpha * b), is the weight of Lerp, and is
// ignored otherwise.
// LogicalAnd/Or/Xor take any input dtypes and need a bool out.
void binary(BinaryOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, double alpha,
            cudaStream_t stream);

// out = a op s (or s op a when scalar_first; alpha as in binary), computed in out.dtype. Pow with exponents 2, 3,
// 0.5, -0.5, -1, -2, 1, 0 uses the exact forms the CPU engine uses (x * x, sqrt, ...).
void binary_scalar(BinaryOp op, const TensorArg& out, const TensorArg& a, const Scalar& s, bool scalar_first,
                   double alpha, cudaStream_t stream);

// out (bool) = a cmp b, both converted to `compute` first.
void compare(CompareOp op, const TensorArg& out, const TensorArg& a, const TensorArg& b, ScalarType compute,
             cudaStream_t stream);

// out (bool) = a cmp s, with s rounded to `compute` (result_type(a, s)).
void compare_scalar(CompareOp op, const TensorArg& out, const TensorArg& a, const Scalar& s, ScalarType compute,
                    cudaStream_t stream);

const char* binary_op_name(BinaryOp op);   // "add", "sub", ...
const char* compare_op_name(CompareOp op); // "eq", "ne", ...

}  // namespace rt::cuda_kernels
