#include <cuda_runtime.h>

#include "cuda_kernels.h"
#include "gelu_math.h"
#include "rt/plugin/cuda_launch.h"

namespace fbg {
namespace {

constexpr int kBlock = 256;

unsigned blocks_for(int64_t work) {
  const int64_t b = (work + kBlock - 1) / kBlock;
  return unsigned(b < 1 ? 1 : (b > 4096 ? 4096 : b));  // a grid-stride loop covers the rest
}

const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

template <typename T>
__global__ void forward_kernel(const T* x, const T* b, T* y, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(blockDim.x) * gridDim.x)
    y[i] = gelu(T(x[i] + b[i % n]));
}

template <typename T>
__global__ void grad_x_kernel(const T* x, const T* b, const T* gy, T* gx, int64_t total, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(blockDim.x) * gridDim.x)
    gx[i] = gy[i] * gelu_grad(T(x[i] + b[i % n]));
}

// grad_b in two passes, deterministic (no atomics): first each (column, chunk of rows) sums its rows into
// partial[chunk][column], with neighbouring threads reading neighbouring elements of a row; then one thread per
// column adds its chunks in order. The chunks spread the first pass over the whole GPU when there are few columns.
template <typename T>
__global__ void grad_b_partial_kernel(const T* gx, double* partial, int64_t rows, int64_t n, int64_t rows_per_chunk) {
  const int64_t chunk = blockIdx.y;
  const int64_t first = chunk * rows_per_chunk;
  const int64_t last = first + rows_per_chunk < rows ? first + rows_per_chunk : rows;
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(blockDim.x) * gridDim.x) {
    double s = 0;
    for (int64_t r = first; r < last; ++r) s += double(gx[r * n + j]);
    partial[chunk * n + j] = s;
  }
}

template <typename T>
__global__ void grad_b_sum_kernel(const double* partial, T* gb, int64_t chunks, int64_t n) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(blockDim.x) * gridDim.x) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[c * n + j];
    gb[j] = T(s);
  }
}

template <typename T>
const char* forward(const T* x, const T* b, T* y, int64_t rows, int64_t n, void* stream) {
  const int64_t total = rows * n;
  if (total == 0) return nullptr;
  RT_PLUGIN_LAUNCH(blocks_for(total), kBlock, static_cast<cudaStream_t>(stream), forward_kernel<T>)(x, b, y, total, n);
  return launched();
}

template <typename T>
const char* backward(const T* x, const T* b, const T* gy, T* gx, T* gb, double* partial, int64_t chunks, int64_t rows,
                     int64_t n, void* stream) {
  const int64_t total = rows * n;
  const auto s = static_cast<cudaStream_t>(stream);
  if (total > 0) {
    RT_PLUGIN_LAUNCH(blocks_for(total), kBlock, s, grad_x_kernel<T>)(x, b, gy, gx, total, n);
    if (const char* e = launched()) return e;
  }
  if (!gb || n == 0) return nullptr;
  const int64_t rows_per_chunk = chunks > 0 ? (rows + chunks - 1) / chunks : 0;
  if (chunks > 0) {
    RT_PLUGIN_LAUNCH(dim3(blocks_for(n), unsigned(chunks)), kBlock, s, grad_b_partial_kernel<T>)(
        gx, partial, rows, n, rows_per_chunk);
    if (const char* e = launched()) return e;
  }
  RT_PLUGIN_LAUNCH(blocks_for(n), kBlock, s, grad_b_sum_kernel<T>)(partial, gb, chunks, n);
  return launched();
}

}  // namespace

const char* forward_cuda(const float* x, const float* b, float* y, int64_t rows, int64_t n, void* stream) {
  return forward(x, b, y, rows, n, stream);
}
const char* forward_cuda(const double* x, const double* b, double* y, int64_t rows, int64_t n, void* stream) {
  return forward(x, b, y, rows, n, stream);
}
int64_t bias_grad_chunks(int64_t rows, int64_t n) {
  if (rows <= 0 || n <= 0) return 0;
  // About 64 rows a chunk, at most 256 chunks: enough blocks for a large GPU, a small scratch buffer.
  const int64_t chunks = (rows + 63) / 64;
  return chunks > 256 ? 256 : chunks;
}

const char* backward_cuda(const float* x, const float* b, const float* gy, float* gx, float* gb, double* partial,
                          int64_t chunks, int64_t rows, int64_t n, void* stream) {
  return backward(x, b, gy, gx, gb, partial, chunks, rows, n, stream);
}
const char* backward_cuda(const double* x, const double* b, const double* gy, double* gx, double* gb,
                          double* partial, int64_t chunks, int64_t rows, int64_t n, void* stream) {
  return backward(x, b, gy, gx, gb, partial, chunks, rows, n, stream);
}

}  // namespace fbg
