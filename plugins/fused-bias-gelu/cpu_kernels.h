// cpu_kernels.h — the fused bias + GELU loops on the CPU, over contiguous rows: x and y are [rows, n], b is [n].
//
//   fbg::forward_cpu(x, b, y, rows, n);                          // y = gelu(x + b)
//   fbg::backward_cpu(x, b, gy, gx, gb, rows, n);                // gx = gy * gelu'(x + b); gb = sum of gx over rows
//
// One pass over x per call; rows split over OpenMP threads when there is enough work. gx may be a scratch
// buffer the caller drops (grad_b needs it); gb may be nullptr when no bias gradient is wanted.
#pragma once
#include <cstdint>

namespace fbg {

void forward_cpu(const float* x, const float* b, float* y, int64_t rows, int64_t n);
void forward_cpu(const double* x, const double* b, double* y, int64_t rows, int64_t n);
void backward_cpu(const float* x, const float* b, const float* gy, float* gx, float* gb, int64_t rows, int64_t n);
void backward_cpu(const double* x, const double* b, const double* gy, double* gx, double* gb, int64_t rows, int64_t n);

}  // namespace fbg
