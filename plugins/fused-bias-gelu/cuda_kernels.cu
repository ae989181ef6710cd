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

// One thread per column: neighbouring threads read neighbouring elements of each row.
template <typename T>
__global__ void grad_b_kernel(const T* gx, T* gb, int64_t rows, int64_t n) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < n; j += int64_t(blockDim.x) * gridDim.x) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += double(gx[r * n + j]);
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
const char* backward(const T* x, const T* b, const T* gy, T* gx, T* gb, int64_t rows, int64_t n, void* stream) {
  const int64_t total = rows * n;
  const auto s = static_cast<cudaStream_t>(stream);
  if (total > 0) {
    RT_PLUGIN_LAUNCH(blocks_for(total), kBlock, s, grad_x_kernel<T>)(x, b, gy, gx, total, n);
    if (const char* e = launched()) return e;
  }
  if (gb && n > 0) {
    RT_PLUGIN_LAUNCH(blocks_for(n), kBlock, s, grad_b_kernel<T>)(gx, gb, rows, n);
    return launched();
  }
  return nullptr;
}

}  // namespace

const char* forward_cuda(const float* x, const float* b, float* y, int64_t rows, int64_t n, void* stream) {
  return forward(x, b, y, rows, n, stream);
}
const char* forward_cuda(const double* x, const double* b, double* y, int64_t rows, int64_t n, void* stream) {
  return forward(x, b, y, rows, n, stream);
}
const char* backward_cuda(const float* x, const float* b, const float* gy, float* gx, float* gb, int64_t rows,
                          int64_t n, void* stream) {
  return backward(x, b, gy, gx, gb, rows, n, stream);
}
const char* backward_cuda(const double* x, const double* b, const double* gy, double* gx, double* gb, int64_t rows,
                          int64_t n, void* stream) {
  return backward(x, b, gy, gx, gb, rows, n, stream);
}

}  // namespace fbg
