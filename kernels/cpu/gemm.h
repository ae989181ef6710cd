// kernels/cpu/gemm.h — matrix products on the CPU through OpenBLAS.
//
//   rt::cpu::TensorView out = ..., x = ..., wt = ...;      // [64, 10], [64, 32], [32, 10] (wt a transposed view)
//   if (rt::cpu::matrix_layout(wt).ok)                       // BLAS reads it in place (CblasTrans)
//     rt::cpu::batched_matmul(out, x, wt, 1.0, 0.0);         // out = x @ wt
//   rt::cpu::batched_matmul(out, x, wt, 1.0, 1.0);           // out += x @ wt (beta = 1: bias already in out)
//
// Operands are strided views [..., m, k] and [..., k, n]; out is contiguous [..., m, n] and the
// operands' batch dims equal out's (they may have stride 0, i.e. be broadcast). A matrix whose last
// two dims are row-contiguous goes to BLAS as is, a column-contiguous one as CblasTrans; the caller
// copies anything else densely first (matrix_layout says which). float32/float64 use sgemm/dgemm
// (sgemv/dgemv for one row or column), integer types a plain loop; the caller converts float16 and
// bfloat16. See Note [GEMM threads] in gemm.cpp for how batches share the cores with OpenBLAS.
// (The engine's CPU matmul, engine/src/ops/cpu_matmul.cpp, does the copies and conversions.)
#pragma once
#include <cstdint>

#include "stop_request.h"
#include "tensor_view.h"
#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

// How BLAS can read the last two dims of a strided view without a copy.
struct MatrixLayout {
  bool ok = false;     // false: copy it densely first
  bool trans = false;  // stored column-contiguous: passed as CblasTrans
  int64_t ld = 0;
};
MatrixLayout matrix_layout(const TensorView& t);

// out = alpha * a @ b + beta * out over the batch. a and b have out's dtype (float32, float64, int32,
// int64 or uint8; DTypeError otherwise) and matrix_layout(..).ok. Polls `stop` between the batch's
// GEMMs and returns early when it asks.
void batched_matmul(const TensorView& out, const TensorView& a, const TensorView& b, double alpha, double beta,
                    const StopRequest& stop = {});

// out[j] = sum_i x[i, j] over a contiguous [rows, cols] x; out is a contiguous [cols] of x's
// dtype. Rows are added in order, so the result does not depend on the thread count.
void sum_rows(const TensorView& out, const TensorView& x);

// Row-major c[m, n] = alpha * op(a) @ op(b) + beta * c, where op(a) is a[m, k] (lda >= k) or,
// with ta, the transpose of a stored [k, m] (lda >= m); likewise b. beta = 0 ignores c's
// contents (NaN included). Defined for float, double, int32_t, int64_t and uint8_t.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace rt::cpu

RT_API_END
