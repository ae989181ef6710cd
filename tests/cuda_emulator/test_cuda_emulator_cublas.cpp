// The CUDA emulator's cuBLAS (kernels/cuda_emulator/cublas.cpp), through the real cuBLAS header:
// handles, workspaces and status names, and cublasGemmEx / cublasGemmStridedBatchedEx against a
// naive column-major reference in double, for every transpose combination and type pair the
// engine uses, with padded leading dimensions whose padding must stay untouched.
#include <catch2/catch.hpp>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <vector>

namespace {

void* device_alloc(size_t bytes) {
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
  return p;
}

// A column-major matrix with leading dimension ld >= rows, its padding filled with a marker.
template <class T>
struct Matrix {
  int rows, cols, ld;
  std::vector<T> data;
  T& at(int r, int c) { return data[size_t(r + c * ld)]; }
  T at(int r, int c) const { return data[size_t(r + c * ld)]; }
};

constexpr float kPadding = -96.f;  // exact in every type, and no product here reaches it

// Small multiples of 0.5: products and short sums are exact in float, half and bfloat16.
float value_for(int r, int c, int seed) { return float(((r * 7 + c * 3 + seed * 5) % 9) - 4) * 0.5f; }

template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return T(v);
}

template <class T>
double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return double(v);
}

template <class T>
Matrix<T> make_matrix(int rows, int cols, int ld, int seed) {
  Matrix<T> m{rows, cols, ld, std::vector<T>(size_t(ld) * size_t(std::max(cols, 1)), from_float<T>(kPadding))};
  for (int c = 0; c < cols; ++c)
    for (int r = 0; r < rows; ++r) m.at(r, c) = from_float<T>(value_for(r, c, seed));
  return m;
}

// alpha * op(A) * op(B) + beta * C, in double, for a stored A (B) read transposed when ta (tb).
template <class TA, class TC>
std::vector<double> reference(const Matrix<TA>& A, bool ta, const Matrix<TA>& B, bool tb, const Matrix<TC>& C,
                              int m, int n, int k, double alpha, double beta) {
  std::vector<double> out(size_t(m) * size_t(n));
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += to_double(ta ? A.at(p, i) : A.at(i, p)) * to_double(tb ? B.at(j, p) : B.at(p, j));
      out[size_t(i + j * m)] = alpha * sum + (beta == 0 ? 0.0 : beta * to_double(C.at(i, j)));
    }
  return out;
}

struct Blas {
  cublasHandle_t h = nullptr;
  Blas() { REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS); }
  ~Blas() { cublasDestroy(h); }
};

// Runs one gemm of every transpose combination on m x n x k with padded leading dimensions and
// checks C against the reference within `tolerance`, and that C's padding is untouched.
template <class T, class TC, class Scalar>
void check_all_transposes(cudaDataType ab_type, cudaDataType c_type, cublasComputeType_t compute, double tolerance,
                          Scalar alpha, Scalar beta) {
  Blas blas;
  const int m = 5, n = 4, k = 3;
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      CAPTURE(ta, tb);
      const Matrix<T> A = ta ? make_matrix<T>(k, m, k + 2, 1) : make_matrix<T>(m, k, m + 3, 1);
      const Matrix<T> B = tb ? make_matrix<T>(n, k, n + 1, 2) : make_matrix<T>(k, n, k + 4, 2);
      Matrix<TC> C = make_matrix<TC>(m, n, m + 2, 3);
      const std::vector<double> want = reference(A, ta, B, tb, C, m, n, k, double(alpha), double(beta));
      REQUIRE(cublasGemmEx(blas.h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
                           A.data.data(), ab_type, A.ld, B.data.data(), ab_type, B.ld, &beta, C.data.data(), c_type,
                           C.ld, compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) CHECK(std::abs(to_double(C.at(i, j)) - want[size_t(i + j * m)]) <= tolerance);
        for (int i = m; i < C.ld; ++i) CHECK(to_double(C.at(i, j)) == double(kPadding));
      }
    }
}

}  // namespace

TEST_CASE("cuBLAS handles, workspaces and status names") {
  cublasHandle_t h = nullptr;
  REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
  CHECK(h != nullptr);
  CHECK(cublasCreate(nullptr) == CUBLAS_STATUS_INVALID_VALUE);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0) == cudaSuccess);
  CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
  void* workspace = device_alloc(4096);
  CHECK(cublasSetWorkspace(h, workspace, 4096) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasSetWorkspace(h, static_cast<char*>(workspace) + 16, 1024) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasSetStream(nullptr, s) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasSetWorkspace(nullptr, workspace, 4096) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasDestroy(nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cudaFree(workspace) == cudaSuccess);
  CHECK(cudaStreamDestroy(s) == cudaSuccess);

  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_SUCCESS)) == "success");
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)) == "CUBLAS_STATUS_INVALID_VALUE");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)) ==
        "an unsupported value or parameter was passed to the function");
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED)) == "CUBLAS_STATUS_NOT_SUPPORTED");
  CHECK(std::string(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)) ==
        "the requested functionality is not supported");
  CHECK(std::string(cublasGetStatusName(cublasStatus_t(12345))) == "unrecognized status");
}

TEST_CASE("cublasGemmEx matches a column-major reference for N/N, T/N, N/T and T/T") {
  SECTION("float") {
    check_all_transposes<float, float>(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1e-5, 1.5f, 0.5f);
  }
  SECTION("float, TF32 allowed") {
    check_all_transposes<float, float>(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 1e-5, 1.f, 0.f);
  }
  SECTION("double") {
    check_all_transposes<double, double>(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 1e-12, 0.75, -2.0);
  }
  // Exact: the values are multiples of 0.25 well inside half's and bfloat16's precision.
  SECTION("half") {
    check_all_transposes<__half, __half>(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0.0, 0.5f, 2.f);
  }
  SECTION("bfloat16") {
    check_all_transposes<__nv_bfloat16, __nv_bfloat16>(CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 0.0, 1.f, 1.f);
  }
  SECTION("half into float") {
    check_all_transposes<__half, float>(CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0.0, 1.f, 0.5f);
  }
  SECTION("bfloat16 into float") {
    check_all_transposes<__nv_bfloat16, float>(CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0.0, 2.f, 0.f);
  }
}

TEST_CASE("cublasGemmEx rounds half results, and beta 0 never reads C") {
  Blas blas;
  const int m = 3, n = 2, k = 40;
  std::vector<__half> a(size_t(m) * k), b(size_t(k) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = __float2half_rn(0.1f * float(i % 7) - 0.3f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = __float2half_rn(0.37f - 0.05f * float(i % 11));
  std::vector<__half> c(size_t(m) * n, __float2half_rn(std::numeric_limits<float>::quiet_NaN()));
  const float alpha = 1.f, beta = 0.f;
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_16F, m, b.data(),
                       CUDA_R_16F, k, &beta, c.data(), CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double want = 0;
      for (int p = 0; p < k; ++p)
        want += double(__half2float(a[size_t(i + p * m)])) * __half2float(b[size_t(p + j * k)]);
      const float got = __half2float(c[size_t(i + j * m)]);
      CHECK(std::isfinite(got));
      // Rounded to nearest: within half a unit in the last place of half (11 significant bits),
      // plus the float sum's own error.
      int exponent = 0;
      std::frexp(want, &exponent);
      CHECK(std::abs(got - want) <= 0.5 * std::ldexp(1.0, exponent - 11) + 1e-5);
    }

  std::vector<float> cf(4, std::numeric_limits<float>::quiet_NaN()), af{1, 2, 3, 4}, bf{1, 0, 0, 1};
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &alpha, af.data(), CUDA_R_32F, 2, bf.data(),
                       CUDA_R_32F, 2, &beta, cf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(cf == af);
}

TEST_CASE("cublasGemmEx with k == 0 scales C by beta") {
  Blas blas;
  std::vector<double> c{1, 2, 3, 4};
  const double alpha = 1, beta = 3;
  REQUIRE(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &alpha, nullptr, CUDA_R_64F, 2, nullptr, CUDA_R_64F,
                       1, &beta, c.data(), CUDA_R_64F, 2, CUBLAS_COMPUTE_64F,
                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(c == std::vector<double>{3, 6, 9, 12});
}

TEST_CASE("cublasGemmStridedBatchedEx steps each operand by its batch stride") {
  Blas blas;
  const int m = 4, n = 3, k = 5, batches = 3;
  const int lda = k + 1, ldb = k + 2, ldc = m + 1;  // A is stored k x m (transposed), B k x n
  const long long stride_a = lda * m + 7, stride_b = ldb * n + 3, stride_c = ldc * n + 5;
  std::vector<float> a(size_t(stride_a * batches)), b(size_t(stride_b * batches));
  std::vector<float> c(size_t(stride_c * batches), kPadding);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 13) - 6) * 0.25f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 7) - 3) * 0.5f;
  const float alpha = 2.f, beta = 0.f;
  REQUIRE(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                     stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                     stride_c, batches, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  std::vector<bool> written(c.size(), false);
  for (int t = 0; t < batches; ++t)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double want = 0;
        for (int p = 0; p < k; ++p)
          want += double(a[size_t(t * stride_a + p + i * lda)]) * b[size_t(t * stride_b + p + j * ldb)];
        const size_t at = size_t(t * stride_c + i + j * ldc);
        CHECK(c[at] == float(alpha * want));  // exact: quarter steps, short sums
        written[at] = true;
      }
  for (size_t i = 0; i < c.size(); ++i)
    if (!written[i]) CHECK(c[i] == kPadding);

  // Batch count 0 (or m / n 0) is a successful no-op.
  std::vector<float> before = c;
  CHECK(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                   stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                   stride_c, 0, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
  CHECK(c == before);
  CHECK(cublasGemmStridedBatchedEx(blas.h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, a.data(), CUDA_R_32F, lda,
                                   stride_a, b.data(), CUDA_R_32F, ldb, stride_b, &beta, c.data(), CUDA_R_32F, ldc,
                                   stride_c, -1, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
}

TEST_CASE("cublasGemmEx validates like cuBLAS") {
  Blas blas;
  std::vector<float> buf(64, 0.f);
  std::vector<double> dbuf(64, 0.0);
  const float one = 1.f, zero = 0.f;
  const auto gemm = [&](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, int lda, int ldb, int ldc,
                        cudaDataType ab = CUDA_R_32F, cudaDataType c = CUDA_R_32F,
                        cublasComputeType_t compute = CUBLAS_COMPUTE_32F, cublasHandle_t h = nullptr,
                        cublasGemmAlgo_t algo = CUBLAS_GEMM_DEFAULT) {
    return cublasGemmEx(h ? h : blas.h, ta, tb, m, n, k, &one, buf.data(), ab, lda, buf.data(), ab, ldb, &zero,
                        buf.data(), c, ldc, compute, algo);
  };
  const auto N = CUBLAS_OP_N, T = CUBLAS_OP_T;
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, -1, 3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, -3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, -4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, 4, 1, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda < m
  CHECK(gemm(T, N, 2, 3, 4, 2, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda < k when transposed
  CHECK(gemm(T, N, 2, 3, 4, 4, 4, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, 2, 3, 4, 2, 3, 2) == CUBLAS_STATUS_INVALID_VALUE);  // ldb < k
  CHECK(gemm(N, T, 2, 3, 4, 2, 2, 2) == CUBLAS_STATUS_INVALID_VALUE);  // ldb < n when transposed
  CHECK(gemm(N, T, 2, 3, 4, 2, 3, 2) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 1) == CUBLAS_STATUS_INVALID_VALUE);  // ldc < m
  CHECK(gemm(N, N, 0, 0, 0, 0, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);  // lda >= 1 even when empty
  CHECK(gemm(N, N, 0, 3, 4, 1, 4, 1) == CUBLAS_STATUS_SUCCESS);
  CHECK(gemm(cublasOperation_t(7), N, 2, 3, 4, 4, 4, 2) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, nullptr, cublasGemmAlgo_t(500)) ==
        CUBLAS_STATUS_INVALID_VALUE);

  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_64F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F_FAST_TF32) ==
        CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(gemm(N, N, 2, 3, 4, 2, 4, 2, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK(cublasGemmEx(nullptr, N, N, 2, 3, 4, &one, buf.data(), CUDA_R_32F, 2, buf.data(), CUDA_R_32F, 4, &zero,
                     buf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_INITIALIZED);
  CHECK(cublasGemmEx(blas.h, N, N, 2, 3, 4, nullptr, buf.data(), CUDA_R_32F, 2, buf.data(), CUDA_R_32F, 4, &zero,
                     buf.data(), CUDA_R_32F, 2, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
  const double done = 1.0, dzero = 0.0;
  CHECK(cublasGemmEx(blas.h, N, N, 2, 3, 4, &done, dbuf.data(), CUDA_R_64F, 2, dbuf.data(), CUDA_R_64F, 4, &dzero,
                     dbuf.data(), CUDA_R_64F, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT_TENSOR_OP) ==
        CUBLAS_STATUS_SUCCESS);
}
