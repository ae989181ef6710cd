// kernels/cpu/gemm.h — matrix products on the CPU through OpenBLAS.
//
//   Tensor out = make_tensor({64, 10}, kFloat32);
//   rt::cpu::matmul_into(out, x, w.t());          // out = x @ w.T; w is read in place (CblasTrans)
//   rt::cpu::matmul_into(out, x, w.t(), 1, 1);    // out += x @ w.T (beta = 1: bias already in out)
//
// Operands are strided tensors [..., m, k] and [..., k, n]; out is contiguous [..., m, n] and
// the operands' batch dims equal out's (they may have stride 0, i.e. be broadcast). A matrix
// whose last two dims are row-contiguous goes to BLAS as is, a column-contiguous one as
// CblasTrans; anything else is copied first. float32/float64 use sgemm/dgemm (sgemv/dgemv for
// one row or column), float16/bfloat16 run in float32, integer types use a plain loop.
// See Note [GEMM threads] in gemm.cpp for how batches share the cores with OpenBLAS.
#pragma once
#include <cstdint>

#include "rt/tensor.h"

namespace rt::cpu {

void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0, double beta = 0.0);

// out[j] = sum_i x[i, j] over a contiguous [rows, cols] x; out is a contiguous [cols] of x's
// dtype. Rows are added in order, so the result does not depend on the thread count.
void sum_rows_into(const Tensor& out, const Tensor& x);

// Row-major c[m, n] = alpha * op(a) @ op(b) + beta * c, where op(a) is a[m, k] (lda >= k) or,
// with ta, the transpose of a stored [k, m] (lda >= m); likewise b. beta = 0 ignores c's
// contents (NaN included). Defined for float, double, int32_t, int64_t and uint8_t.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);

}  // namespace rt::cpu
