// cuBLAS-backed gemm and strided-batched gemm. See kernels/cuda/gemm.h, Note [Row-major through cuBLAS].
#include "cuda/gemm.h"

#include <cublas_v2.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cuda/launch.h"

namespace rt::cuda_kernels {
namespace {

std::atomic<bool> g_allow_tf32{false};
std::atomic<void (*)()> g_release_cached_memory{nullptr};

void check_cublas(cublasStatus_t s, const char* call, const std::string& context) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cuBLAS error in ") + call + ": " + cublasGetStatusName(s) + " (" +
                cublasGetStatusString(s) + ") for " + context);
}

// Handles of this thread, one per device; destroyed when the thread exits.
struct HandleCache {
  std::unordered_map<int, cublasHandle_t> handles;
  ~HandleCache() {
    for (auto& [device, h] : handles) cublasDestroy(h);  // status ignored: the driver may be shutting down
  }
};

// cuBLAS's default workspace belongs to the handle: two streams running gemms at once through one
// handle would share it. Each non-default stream gets a workspace of its own (as PyTorch keeps one
// per handle and stream), from cudaMalloc, kept for the process like the pool streams it serves
// (32 MiB on Hopper and later, cuBLAS's recommendation there; 4 MiB before).
void* workspace_for(int device, cudaStream_t stream, size_t& bytes) {
  static std::mutex mu;
  static auto* workspaces = new std::map<std::pair<int, cudaStream_t>, std::pair<void*, size_t>>();
  std::lock_guard<std::mutex> lk(mu);
  auto& w = (*workspaces)[{device, stream}];
  if (!w.first) {
    int major = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "gemm (compute capability)");
    const size_t size = major >= 9 ? size_t(32) << 20 : size_t(4) << 20;
    cudaError_t e = cudaMalloc(&w.first, size);
    void (*release)() = g_release_cached_memory.load(std::memory_order_acquire);
    if (e == cudaErrorMemoryAllocation && release) {  // the caching allocator may hold the memory: free blocks, once
      cudaGetLastError();
      w.first = nullptr;
      release();
      e = cudaMalloc(&w.first, size);
    }
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      w.first = nullptr;
      throw OutOfMemoryError("cuda:" + std::to_string(device) + " out of memory: a matrix product on a new stream needs " +
                             std::to_string(size >> 20) + " MiB of cuBLAS workspace for that stream (cached blocks were already "
                             "returned); free tensors, or run it on a stream used before");
    }
    check_cuda(e, "gemm (cuBLAS workspace for a stream)");
    w.second = size;
  }
  bytes = w.second;
  return w.first;
}

cublasHandle_t handle_for(cudaStream_t stream) {
  thread_local HandleCache cache;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "gemm (cudaGetDevice)");
  auto it = cache.handles.find(device);
  if (it == cache.handles.end()) {
    cublasHandle_t h = nullptr;
    check_cublas(cublasCreate(&h), "cublasCreate", "device " + std::to_string(device));
    it = cache.handles.emplace(device, h).first;
  }
  check_cublas(cublasSetStream(it->second, stream), "cublasSetStream", "device " + std::to_string(device));
  if (stream) {  // cublasSetStream went back to the default workspace, which is the legacy stream's
    size_t bytes = 0;
    void* w = workspace_for(device, stream, bytes);
    check_cublas(cublasSetWorkspace(it->second, w, bytes), "cublasSetWorkspace", "device " + std::to_string(device));
  }
  return it->second;
}

// One operand as cuBLAS sees it: leading dimension, batch stride and transpose flag.
struct Operand {
  int64_t ld = 1, batch_stride = 0;
  bool trans = false;  // multiply by the transpose of the stored row-major matrix
};

std::string shape_of(const TensorArg& t) {
  std::string s = "[";
  for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(t.sizes[i]);
  return s + "]";
}

// Reads the last two dims of `t`. A row-major matrix read column-major is its transpose, so it
// keeps the caller's flag; a column-major view (unit stride in the row dim) is read as is and
// flips it. See Note [Row-major through cuBLAS].
Operand operand_of(const TensorArg& t, bool trans, const char* op, const char* name) {
  const int r = t.ndim - 2, c = t.ndim - 1;
  const int64_t rows = t.sizes[r], cols = t.sizes[c];
  Operand o;
  o.batch_stride = t.ndim == 3 ? t.strides[0] : 0;
  int64_t lead = 0, min_ld = 1, other = 0;
  if (t.strides[c] == 1 || cols == 1) {
    lead = t.strides[r], min_ld = std::max<int64_t>(cols, 1), other = rows, o.trans = trans;
  } else if (t.strides[r] == 1 || rows == 1) {
    lead = t.strides[c], min_ld = std::max<int64_t>(rows, 1), other = cols, o.trans = !trans;
  } else {
    throw ValueError(std::string(op) + " on CUDA: " + name + " " + shape_of(t) +
                     " has no unit stride in its last two dims; call .contiguous() on it first");
  }
  if (lead < min_ld) {
    if (other > 1)  // e.g. an expanded (stride 0) dim: cuBLAS cannot express it
      throw ValueError(std::string(op) + " on CUDA: " + name + " " + shape_of(t) +
                       " has overlapping rows (leading stride " + std::to_string(lead) +
                       "); call .contiguous() on it first");
    lead = min_ld;  // a single row or column: the leading dimension is never used to step
  }
  o.ld = lead;
  return o;
}

int as_int(int64_t v, const char* what, const char* op) {
  if (v < 0 || v > INT_MAX)
    throw ValueError(std::string(op) + " on CUDA: " + what + " = " + std::to_string(v) +
                     " exceeds cuBLAS's 32-bit limit; split the product into smaller ones");
  return int(v);
}

struct Types {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scalars;
};

Types types_for(ScalarType dt, const char* op) {
  switch (dt) {
    case kFloat32:
      return {CUDA_R_32F, g_allow_tf32.load(std::memory_order_relaxed) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
              false};
    case kFloat64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    case kFloat16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case kBFloat16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    default:
      throw DTypeError(std::string(op) + " on CUDA: dtype " + std::string(dtype_name(dt)) +
                       " is not supported; expected float32, float64, float16 or bfloat16 (convert with .to(rt::kFloat32))");
  }
}

void run(const TensorArg& c, const TensorArg& a, const TensorArg& b, bool trans_a, bool trans_b, double alpha,
         double beta, cudaStream_t stream, bool batched) {
  const char* op = batched ? "gemm_batched" : "gemm";
  const int nd = batched ? 3 : 2;
  if (a.ndim != nd || b.ndim != nd || c.ndim != nd)
    throw ShapeError(std::string(op) + " on CUDA: expected " + std::to_string(nd) + "-d operands, got a " + shape_of(a) +
                     ", b " + shape_of(b) + ", c " + shape_of(c));
  if (a.dtype != c.dtype || b.dtype != c.dtype)
    throw DTypeError(std::string(op) + " on CUDA: operands must share one dtype, got a " +
                     std::string(dtype_name(a.dtype)) + ", b " + std::string(dtype_name(b.dtype)) + ", c " +
                     std::string(dtype_name(c.dtype)));
  const Types ty = types_for(c.dtype, op);
  const Operand A = operand_of(a, trans_a, op, "a"), B = operand_of(b, trans_b, op, "b");
  const int64_t M = trans_a ? a.sizes[nd - 1] : a.sizes[nd - 2], K = trans_a ? a.sizes[nd - 2] : a.sizes[nd - 1];
  const int64_t Kb = trans_b ? b.sizes[nd - 1] : b.sizes[nd - 2], N = trans_b ? b.sizes[nd - 2] : b.sizes[nd - 1];
  const int64_t batch = batched ? c.sizes[0] : 1;
  const std::string context = "c " + shape_of(c) + " = a " + shape_of(a) + (trans_a ? "^T" : "") + " @ b " +
                              shape_of(b) + (trans_b ? "^T" : "");
  if (K != Kb || c.sizes[nd - 2] != M || c.sizes[nd - 1] != N ||
      (batched && (a.sizes[0] != batch || b.sizes[0] != batch)))
    throw ShapeError(std::string(op) + " on CUDA: shapes do not multiply: " + context);
  if (c.strides[nd - 1] != 1 && N > 1)
    throw ValueError(std::string(op) + " on CUDA: the output " + shape_of(c) +
                     " needs a unit last stride; write into a contiguous tensor and copy");
  if (M == 0 || N == 0 || batch == 0) return;
  const int64_t ldc = M > 1 ? c.strides[nd - 2] : std::max<int64_t>(N, 1);
  if (ldc < std::max<int64_t>(N, 1))
    throw ValueError(std::string(op) + " on CUDA: the output " + shape_of(c) + " has overlapping rows; write into a contiguous tensor");
  // Column-major call: C^T (N x M) = op(B)^T (N x K) * op(A)^T (K x M). op(X)^T of a stored
  // row-major X is "no transpose" of its column-major reading when X is not transposed, and
  // "transpose" otherwise.
  const cublasOperation_t opb = B.trans ? CUBLAS_OP_T : CUBLAS_OP_N, opa = A.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int m = as_int(N, "N", op), n = as_int(M, "M", op), k = as_int(K, "K", op);
  const int lda = as_int(A.ld, "lda", op), ldb = as_int(B.ld, "ldb", op), ldcc = as_int(ldc, "ldc", op);
  const float alpha_f = float(alpha), beta_f = float(beta);
  const void* pa = ty.double_scalars ? static_cast<const void*>(&alpha) : static_cast<const void*>(&alpha_f);
  const void* pb = ty.double_scalars ? static_cast<const void*>(&beta) : static_cast<const void*>(&beta_f);
  cublasHandle_t h = handle_for(stream);
  if (K == 0 && beta == 0.0 && c.is_contiguous()) {  // an empty sum: zeros, without relying on cuBLAS's k == 0 path
    check_cuda(cudaMemsetAsync(c.data, 0, size_t(c.numel()) * element_size(c.dtype), stream), op);
    return;
  }
  if (!batched) {
    check_cublas(cublasGemmEx(h, opb, opa, m, n, k, pa, b.data, ty.data, ldb, a.data, ty.data, lda, pb, c.data,
                              ty.data, ldcc, ty.compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx", context);
    return;
  }
  const int bc = as_int(batch, "batch", op);
  check_cublas(cublasGemmStridedBatchedEx(h, opb, opa, m, n, k, pa, b.data, ty.data, ldb, B.batch_stride, a.data,
                                          ty.data, lda, A.batch_stride, pb, c.data, ty.data, ldcc, c.strides[0], bc,
                                          ty.compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx", context);
}

}  // namespace

void set_release_cached_memory(void (*release)()) { g_release_cached_memory.store(release, std::memory_order_release); }

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow, std::memory_order_relaxed); }
bool allow_tf32() { return g_allow_tf32.load(std::memory_order_relaxed); }

void gemm(const TensorArg& c, const TensorArg& a, const TensorArg& b, bool trans_a, bool trans_b, double alpha,
          double beta, cudaStream_t stream) {
  run(c, a, b, trans_a, trans_b, alpha, beta, stream, false);
}

void gemm_batched(const TensorArg& c, const TensorArg& a, const TensorArg& b, bool trans_a, bool trans_b,
                  double alpha, double beta, cudaStream_t stream) {
  run(c, a, b, trans_a, trans_b, alpha, beta, stream, true);
}

}  // namespace rt::cuda_kernels
