// kernels/cuda_emulator/cublas.cpp — the part of cuBLAS kernels/cuda/gemm.cpp calls, on the CPU.
//
// Linked instead of libcublas (see emulator.h). Each function keeps the exact signature of
// <cublas_v2.h>, whose macros rename some of them (cublasCreate is cublasCreate_v2, ...): this file
// includes that header and defines the macro names, so the renamed symbols are the ones defined.
//
// cublasGemmEx / cublasGemmStridedBatchedEx compute C = alpha * op(A) * op(B) + beta * C on
// column-major matrices exactly as cuBLAS documents them, when called: the handle's stream is kept
// but, as every stream of the emulator, is always idle. Supported types, as cuBLAS's table has them:
//   CUBLAS_COMPUTE_64F[_PEDANTIC]           A, B, C double; alpha, beta double; sums in double.
//   CUBLAS_COMPUTE_32F[_PEDANTIC]           A = B float, half or bfloat16, C the same or float;
//                                           alpha, beta float; sums in float.
//   CUBLAS_COMPUTE_32F_FAST_{TF32,16F,16BF} A, B, C float; computed as CUBLAS_COMPUTE_32F (the fast
//                                           modes allow, but do not require, reduced-precision inputs).
// Other combinations give CUBLAS_STATUS_NOT_SUPPORTED.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// What a cublasHandle_t points to.
struct Handle {
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;  // nullptr: cuBLAS's own pool (the emulator needs no workspace)
  size_t workspace_bytes = 0;
};

Handle* as_handle(cublasHandle_t h) { return reinterpret_cast<Handle*>(h); }

constexpr size_t kWorkspaceAlignment = 256;

struct StatusText {
  cublasStatus_t status;
  const char* name;
  const char* description;
};

// libcublas's own names and descriptions.
constexpr StatusText kStatusTexts[] = {
    {CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", "success"},
    {CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"},
    {CUBLAS_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"},
    {CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE",
     "an unsupported value or parameter was passed to the function"},
    {CUBLAS_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH",
     "the function requires an architectural feature absent from the device"},
    {CUBLAS_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"},
    {CUBLAS_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED", "the function failed to launch on the GPU"},
    {CUBLAS_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"},
    {CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED", "the requested functionality is not supported"},
    {CUBLAS_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", "the license check failed"},
};

const StatusText* text_of(cublasStatus_t s) {
  for (const StatusText& t : kStatusTexts)
    if (t.status == s) return &t;
  return nullptr;
}

// ---- Elements -----------------------------------------------------------------------------------

size_t element_size(cudaDataType type) {
  switch (type) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: return 4;
    default: return 2;  // CUDA_R_16F, CUDA_R_16BF: the only others that get past check_types
  }
}

template <class Acc>
Acc read_element(const void* data, cudaDataType type, int64_t index) {
  switch (type) {
    case CUDA_R_64F: return Acc(static_cast<const double*>(data)[index]);
    case CUDA_R_32F: return Acc(static_cast<const float*>(data)[index]);
    case CUDA_R_16F: return Acc(__half2float(static_cast<const __half*>(data)[index]));
    default: return Acc(__bfloat162float(static_cast<const __nv_bfloat16*>(data)[index]));
  }
}

template <class Acc>
void write_element(void* data, cudaDataType type, int64_t index, Acc value) {
  switch (type) {
    case CUDA_R_64F: static_cast<double*>(data)[index] = double(value); break;
    case CUDA_R_32F: static_cast<float*>(data)[index] = float(value); break;
    case CUDA_R_16F: static_cast<__half*>(data)[index] = __float2half_rn(float(value)); break;
    default: static_cast<__nv_bfloat16*>(data)[index] = __float2bfloat16_rn(float(value)); break;
  }
}

// Whether the compute type sums in double; CUBLAS_STATUS_NOT_SUPPORTED for combinations cuBLAS lacks
// (or that the engine never asks for, such as integer and complex products).
cublasStatus_t check_types(cudaDataType a, cudaDataType b, cudaDataType c, cublasComputeType_t compute,
                           bool& sums_in_double) {
  if (a != b) return CUBLAS_STATUS_NOT_SUPPORTED;
  switch (compute) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      sums_in_double = true;
      return a == CUDA_R_64F && c == CUDA_R_64F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      sums_in_double = false;
      if (a == CUDA_R_32F) return c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
      if (a == CUDA_R_16F || a == CUDA_R_16BF)
        return c == a || c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
      return CUBLAS_STATUS_NOT_SUPPORTED;
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      sums_in_double = false;
      return a == CUDA_R_32F && c == CUDA_R_32F ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

bool is_operation(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// The algorithms cuBLAS names; all compute the same product here.
bool is_algorithm(cublasGemmAlgo_t algo) {
  return (algo >= CUBLAS_GEMM_DEFAULT && algo <= CUBLAS_GEMM_ALGO23) ||
         (algo >= CUBLAS_GEMM_DEFAULT_TENSOR_OP && algo <= CUBLAS_GEMM_ALGO15_TENSOR_OP) ||
         algo == CUBLAS_GEMM_AUTOTUNE;
}

// ---- The product --------------------------------------------------------------------------------

struct Operand {
  const void* data;
  cudaDataType type;
  int64_t ld;
  long long batch_stride;  // elements
  bool trans;              // CUBLAS_OP_T or CUBLAS_OP_C: these are real types
};

struct Gemm {
  int m, n, k;
  Operand a, b;
  void* c;
  cudaDataType c_type;
  int64_t ldc;
  long long c_stride;
  int batches;
};

const void* batch_base(const Operand& x, int batch) {
  return static_cast<const char*>(x.data) + batch * x.batch_stride * int64_t(element_size(x.type));
}

// Copies op(X), rows x cols, of batch `batch` into `out`, column-major and tight, converted to Acc:
// the multiply loop then walks unit strides whatever the transposes and types.
template <class Acc>
void pack(const Operand& x, int batch, int rows, int cols, std::vector<Acc>& out) {
  const void* base = batch_base(x, batch);
  out.resize(size_t(rows) * size_t(cols));
  for (int64_t col = 0; col < cols; ++col)
    for (int64_t row = 0; row < rows; ++row)
      out[size_t(row + col * rows)] = read_element<Acc>(base, x.type, x.trans ? col + row * x.ld : row + col * x.ld);
}

// C = alpha * op(A) * op(B) + beta * C for every batch. Per column j of C, the sum runs over p
// outside and i inside (the column-major form of the i-k-j order), so both the packed op(A) and
// the column of sums are read with unit stride. As in the reference BLAS, alpha == 0 reads
// neither A nor B, and beta == 0 never reads C (which may hold NaN).
template <class Acc>
void multiply(const Gemm& g, Acc alpha, Acc beta) {
  std::vector<Acc> a, b, sums(size_t(g.m));
  for (int batch = 0; batch < g.batches; ++batch) {
    if (alpha != Acc(0)) {
      pack(g.a, batch, g.m, g.k, a);
      pack(g.b, batch, g.k, g.n, b);
    }
    void* c = static_cast<char*>(g.c) + batch * g.c_stride * int64_t(element_size(g.c_type));
    for (int64_t j = 0; j < g.n; ++j) {
      std::fill(sums.begin(), sums.end(), Acc(0));
      if (alpha != Acc(0)) {
        for (int64_t p = 0; p < g.k; ++p) {
          const Acc b_pj = b[size_t(p + j * g.k)];
          const Acc* a_p = a.data() + p * g.m;
          for (int64_t i = 0; i < g.m; ++i) sums[size_t(i)] += a_p[i] * b_pj;
        }
      }
      for (int64_t i = 0; i < g.m; ++i) {
        const int64_t at = i + j * g.ldc;
        Acc value = alpha * sums[size_t(i)];
        if (beta != Acc(0)) value += beta * read_element<Acc>(c, g.c_type, at);
        write_element<Acc>(c, g.c_type, at, value);
      }
    }
  }
}

// cuBLAS's argument checks (a null handle first), then the product.
cublasStatus_t gemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                    const void* alpha, const void* A, cudaDataType Atype, int lda, long long strideA, const void* B,
                    cudaDataType Btype, int ldb, long long strideB, const void* beta, void* C, cudaDataType Ctype,
                    int ldc, long long strideC, int batchCount, cublasComputeType_t computeType,
                    cublasGemmAlgo_t algo) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!is_operation(transa) || !is_operation(transb) || m < 0 || n < 0 || k < 0 || batchCount < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  // Leading dimensions cover the matrices as stored: A is m x k (k x m transposed), B is k x n (n x k).
  const int a_rows = transa == CUBLAS_OP_N ? m : k, b_rows = transb == CUBLAS_OP_N ? k : n;
  if (lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!alpha || !beta || !is_algorithm(algo)) return CUBLAS_STATUS_INVALID_VALUE;
  bool sums_in_double = false;
  if (const cublasStatus_t s = check_types(Atype, Btype, Ctype, computeType, sums_in_double);
      s != CUBLAS_STATUS_SUCCESS)
    return s;
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  const Gemm g{m,
               n,
               k,
               {A, Atype, lda, strideA, transa != CUBLAS_OP_N},
               {B, Btype, ldb, strideB, transb != CUBLAS_OP_N},
               C,
               Ctype,
               ldc,
               strideC,
               batchCount};
  // Scalars are host values of the compute type's scale type: double for 64F, float for 32F.
  if (sums_in_double)
    multiply<double>(g, *static_cast<const double*>(alpha), *static_cast<const double*>(beta));
  else
    multiply<float>(g, *static_cast<const float*>(alpha), *static_cast<const float*>(beta));
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

// ---- Handles ------------------------------------------------------------------------------------

extern "C" cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = reinterpret_cast<cublasHandle_t>(new Handle());
  return CUBLAS_STATUS_SUCCESS;
}

extern "C" cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete as_handle(handle);
  return CUBLAS_STATUS_SUCCESS;
}

// Like cuBLAS, setting a stream goes back to the default workspace.
extern "C" cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t streamId) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  Handle* h = as_handle(handle);
  h->stream = streamId;
  h->workspace = nullptr;
  h->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

// Kept, not used: the CPU product needs no scratch memory. cuBLAS requires 256-byte alignment.
extern "C" cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0) return CUBLAS_STATUS_INVALID_VALUE;
  Handle* h = as_handle(handle);
  h->workspace = workspace;
  h->workspace_bytes = workspaceSizeInBytes;
  return CUBLAS_STATUS_SUCCESS;
}

extern "C" const char* cublasGetStatusName(cublasStatus_t status) {
  const StatusText* t = text_of(status);
  return t ? t->name : "unrecognized status";
}

extern "C" const char* cublasGetStatusString(cublasStatus_t status) {
  const StatusText* t = text_of(status);
  return t ? t->description : "unrecognized status";
}

// ---- Products -----------------------------------------------------------------------------------

extern "C" cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                       int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype,
                                       int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                                       cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                       cublasGemmAlgo_t algo) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1,
              computeType, algo);
}

extern "C" cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                     cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                                     const void* A, cudaDataType Atype, int lda, long long int strideA,
                                                     const void* B, cudaDataType Btype, int ldb, long long int strideB,
                                                     const void* beta, void* C, cudaDataType Ctype, int ldc,
                                                     long long int strideC, int batchCount,
                                                     cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return gemm(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
              ldc, strideC, batchCount, computeType, algo);
}
