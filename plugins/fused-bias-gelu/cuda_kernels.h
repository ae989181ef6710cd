// cuda_kernels.h — the fused bias + GELU kernels on a GPU, launched on the host's stream. Plain C++ (no CUDA
// header), so ops.cpp compiles without the toolkit. Pointers are device addresses of contiguous tensors:
// x, y, gy, gx are [rows, n], b and gb are [n].
//
//   if (const char* e = fbg::forward_cuda(x, b, y, rows, n, stream)) throw ...;   // nullptr: launched
//
// Each returns nullptr once its kernels are queued, or CUDA's message for the launch error.
#pragma once
#include <cstdint>

namespace fbg {

const char* forward_cuda(const float* x, const float* b, float* y, int64_t rows, int64_t n, void* stream);
const char* forward_cuda(const double* x, const double* b, double* y, int64_t rows, int64_t n, void* stream);
// gb may be nullptr (no bias gradient); gx is always written (gb is summed from it). The bias sum needs a
// float64 scratch buffer of bias_grad_chunks(rows, n) * n elements on the device (`partial`).
int64_t bias_grad_chunks(int64_t rows, int64_t n);
const char* backward_cuda(const float* x, const float* b, const float* gy, float* gx, float* gb, double* partial,
                          int64_t chunks, int64_t rows, int64_t n, void* stream);
const char* backward_cuda(const double* x, const double* b, const double* gy, double* gx, double* gb,
                          double* partial, int64_t chunks, int64_t rows, int64_t n, void* stream);

}  // namespace fbg
