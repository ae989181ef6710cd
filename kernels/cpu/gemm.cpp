#include "gemm.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <type_traits>

#include "loops.h"

// Note [GEMM threads]
// libopenblas-openmp sizes its threads from omp_get_max_threads() and runs single-threaded
// when called inside an OpenMP parallel region (omp_in_parallel()). So a batch of GEMMs either
// runs one after another with a threaded GEMM each (few, large matrices), or in a parallel loop
// over the batch with single-threaded GEMMs (many or small matrices); the cores are never
// oversubscribed. A batch gives the same bits at any thread count (each GEMM is single-threaded
// either way). A single threaded GEMM need not: OpenBLAS's threaded driver may block k differently
// from its single-threaded one (seen on AVX-512 CPUs for k = 200), so the last bits can change.

namespace rt::cpu {
namespace {

constexpr int64_t kSmallGemm = 96 * 96 * 96;  // below this many multiply-adds, parallelise over the batch

void check_blas_int(int64_t v) {
  if (v > INT_MAX) throw ValueError("matmul: dimension " + std::to_string(v) + " exceeds the BLAS 32-bit index range");
}

template <typename T>
void scale_matrix(int64_t m, int64_t n, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : T(beta * c[i * ldc + j]);
}

template <typename T>
void blas_gemv(bool trans, int64_t rows, int64_t cols, T alpha, const T* a, int64_t lda, const T* x, int64_t incx,
               T beta, T* y, int64_t incy) {
  const auto t = trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, t, int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
  else
    cblas_dgemv(CblasRowMajor, t, int(rows), int(cols), alpha, a, int(lda), x, int(incx), beta, y, int(incy));
}

template <typename T>
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_matrix(m, n, beta, c, ldc);
  for (int64_t v : {m, n, k, lda, ldb, ldc}) check_blas_int(v);
  if (n == 1 || m == 1) {
    const int64_t len = n == 1 ? m : n, inc = n == 1 ? ldc : 1;
    if (beta == T(0))
      for (int64_t i = 0; i < len; ++i) c[i * inc] = T(0);
    if (n == 1)  // column of c = op(a) @ (column of op(b))
      blas_gemv<T>(ta, ta ? k : m, ta ? m : k, alpha, a, lda, b, tb ? 1 : ldb, beta, c, ldc);
    else  // row of c = (row of op(a)) @ op(b)
      blas_gemv<T>(!tb, tb ? n : k, tb ? k : n, alpha, b, ldb, a, ta ? lda : 1, beta, c, 1);
    return;
  }
  const auto opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, opa, opb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, opa, opb, int(m), int(n), int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

template <typename T>
void loop_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  const int64_t ars = ta ? 1 : lda, acs = ta ? lda : 1, brs = tb ? 1 : ldb, bcs = tb ? ldb : 1;
  auto row = [&](int64_t i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += int64_t(a[i * ars + p * acs]) * int64_t(b[p * brs + j * bcs]);
      int64_t r = int64_t(alpha) * acc;
      if (beta != T(0)) r += int64_t(beta) * int64_t(c[i * ldc + j]);
      c[i * ldc + j] = T(r);
    }
  };
  if (m * n * std::max<int64_t>(k, 1) >= kParallelGrain && m > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < m; ++i) row(i);
  } else {
    for (int64_t i = 0; i < m; ++i) row(i);
  }
}

// Whether a's batch dims and rows form one row-major run of rows, so the batch folds into m.
bool folds_into_rows(const TensorView& a, const MatrixLayout& la) {
  if (la.trans) return false;
  const int nd = a.ndim;
  int64_t expected = a.sizes[nd - 2] * la.ld;
  for (int d = nd - 3; d >= 0; --d) {
    if (a.sizes[d] != 1 && a.strides[d] != expected) return false;
    expected *= a.sizes[d];
  }
  return true;
}

template <typename T>
void batched(const TensorView& out, const TensorView& a, const TensorView& b, double alpha, double beta,
             const StopRequest& stop) {
  const MatrixLayout la = matrix_layout(a), lb = matrix_layout(b);
  if (!la.ok || !lb.ok)
    throw ValueError("batched_matmul: an operand's last two dims are neither row- nor column-contiguous; copy it densely first");
  const int nd = out.ndim;
  const int64_t m = out.sizes[nd - 2], n = out.sizes[nd - 1], k = a.sizes[nd - 1];
  int64_t nb = 1;
  for (int d = 0; d < nd - 2; ++d) nb *= out.sizes[d];
  const T* pa = a.data_as<const T>();
  const T* pb = b.data_as<const T>();
  T* pc = out.data_as<T>();
  auto one = [&](int64_t rows, const T* x, const T* y, T* z) {
    if constexpr (std::is_floating_point_v<T>)
      blas_gemm<T>(la.trans, lb.trans, rows, n, k, T(alpha), x, la.ld, y, lb.ld, T(beta), z, n);
    else
      loop_gemm<T>(la.trans, lb.trans, rows, n, k, T(alpha), x, la.ld, y, lb.ld, T(beta), z, n);
  };
  bool b_shared = true;
  for (int d = 0; d < nd - 2; ++d) b_shared = b_shared && (b.strides[d] == 0 || b.sizes[d] == 1);
  if (nb == 1 || (b_shared && folds_into_rows(a, la))) return one(nb * m, pa, pb, pc);

  auto offset = [&](const TensorView& t, int64_t i) {
    int64_t off = 0;
    for (int d = nd - 3; d >= 0; --d) {
      off += (i % t.sizes[d]) * t.strides[d];
      i /= t.sizes[d];
    }
    return off;
  };
  auto run = [&](int64_t i) { one(m, pa + offset(a, i), pb + offset(b, i), pc + i * m * n); };
  const int nt = num_threads();
  if (nt > 1 && !omp_in_parallel() && (nb >= nt || m * n * k <= kSmallGemm)) {
#pragma omp parallel for schedule(static) num_threads(int(std::min<int64_t>(nt, nb)))
    for (int64_t i = 0; i < nb; ++i)
      if (!stop.requested()) run(i);
  } else {
    for (int64_t i = 0; i < nb && !stop.requested(); ++i) run(i);
  }
}

}  // namespace

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (std::is_floating_point_v<T>)
    blas_gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    loop_gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t, const double*, int64_t, double, double*, int64_t);
template void gemm<int32_t>(bool, bool, int64_t, int64_t, int64_t, int32_t, const int32_t*, int64_t, const int32_t*, int64_t, int32_t, int32_t*, int64_t);
template void gemm<int64_t>(bool, bool, int64_t, int64_t, int64_t, int64_t, const int64_t*, int64_t, const int64_t*, int64_t, int64_t, int64_t*, int64_t);
template void gemm<uint8_t>(bool, bool, int64_t, int64_t, int64_t, uint8_t, const uint8_t*, int64_t, const uint8_t*, int64_t, uint8_t, uint8_t*, int64_t);

MatrixLayout matrix_layout(const TensorView& t) {
  const int nd = t.ndim;
  const int64_t rows = t.sizes[nd - 2], cols = t.sizes[nd - 1], rs = t.strides[nd - 2], cs = t.strides[nd - 1];
  const int64_t rmin = std::max<int64_t>(1, rows), cmin = std::max<int64_t>(1, cols);
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cmin)) return {true, false, rows == 1 ? cmin : rs};
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rmin)) return {true, true, cols == 1 ? rmin : cs};
  return {};
}

void batched_matmul(const TensorView& out, const TensorView& a, const TensorView& b, double alpha, double beta,
                    const StopRequest& stop) {
  if (out.numel() == 0) return;
  if (a.dtype != out.dtype || b.dtype != out.dtype)
    throw DTypeError("batched_matmul: operands must have the output's dtype " + std::string(dtype_name(out.dtype)));
  visit_dtype(out.dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      throw DTypeError("matmul: dtype is not supported: " + std::string(dtype_name(out.dtype)));
    else
      batched<T>(out, a, b, alpha, beta, stop);
  });
}

void sum_rows(const TensorView& out, const TensorView& x) {
  const int64_t rows = x.sizes[0], cols = x.sizes[1];
  visit_dtype(x.dtype, [&]<typename T>() {
    using Acc = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double, int64_t>;
    const T* px = x.data_as<const T>();
    T* po = out.data_as<T>();
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (cols + kBlock - 1) / kBlock;
    auto block = [&](int64_t bi) {
      const int64_t j0 = bi * kBlock, j1 = std::min(cols, j0 + kBlock);
      Acc acc[kBlock] = {};
      for (int64_t i = 0; i < rows; ++i) {
        const T* r = px + i * cols;
        for (int64_t j = j0; j < j1; ++j) acc[j - j0] += Acc(compute_t<T>(r[j]));
      }
      for (int64_t j = j0; j < j1; ++j) po[j] = T(compute_t<T>(acc[j - j0]));
    };
    if (rows * cols >= kParallelGrain && blocks > 1 && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
      for (int64_t bi = 0; bi < blocks; ++bi) block(bi);
    } else {
      for (int64_t bi = 0; bi < blocks; ++bi) block(bi);
    }
  });
}

}  // namespace rt::cpu
