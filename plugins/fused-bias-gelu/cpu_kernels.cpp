#include "cpu_kernels.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "gelu_math.h"

// The float32 row loops are compiled twice, for AVX2 and for the build's baseline, and the loader
// picks one for the machine (GCC's target_clones, an ifunc). Sanitizer builds keep one copy.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define FBG_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FBG_CPU_CLONES
#endif

namespace fbg {
namespace {

constexpr int64_t kParallelElements = 1 << 15;  // below this, one thread: a parallel region costs more

int threads_for(int64_t rows, int64_t n) {
  if (rows * n < kParallelElements || rows < 2) return 1;
  return int(std::min<int64_t>(omp_get_max_threads(), rows));
}

FBG_CPU_CLONES void forward_row(const float* x, const float* b, float* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = gelu(x[j] + b[j]);
}
void forward_row(const double* x, const double* b, double* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = gelu(x[j] + b[j]);
}

// gx = gy * gelu'(x + b) for one row, and acc += gx (acc may be nullptr).
FBG_CPU_CLONES void backward_row(const float* x, const float* b, const float* gy, float* gx, double* acc, int64_t n) {
  for (int64_t j = 0; j < n; ++j) gx[j] = gy[j] * gelu_grad(x[j] + b[j]);
  if (acc)
    for (int64_t j = 0; j < n; ++j) acc[j] += double(gx[j]);
}
void backward_row(const double* x, const double* b, const double* gy, double* gx, double* acc, int64_t n) {
  for (int64_t j = 0; j < n; ++j) gx[j] = gy[j] * gelu_grad(x[j] + b[j]);
  if (acc)
    for (int64_t j = 0; j < n; ++j) acc[j] += gx[j];
}

template <typename T>
void forward(const T* x, const T* b, T* y, int64_t rows, int64_t n) {
#pragma omp parallel for schedule(static) num_threads(threads_for(rows, n))
  for (int64_t r = 0; r < rows; ++r) forward_row(x + r * n, b, y + r * n, n);
}

// Each thread sums its rows' gx into its own slice of `partial` (double), and the slices are added in thread
// order: the result does not depend on scheduling.
template <typename T>
void backward(const T* x, const T* b, const T* gy, T* gx, T* gb, int64_t rows, int64_t n) {
  const int threads = threads_for(rows, n);
  std::vector<double> partial(gb ? size_t(threads) * size_t(n) : 0, 0.0);
#pragma omp parallel num_threads(threads)
  {
    double* acc = gb ? partial.data() + size_t(omp_get_thread_num()) * size_t(n) : nullptr;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) backward_row(x + r * n, b, gy + r * n, gx + r * n, acc, n);
  }
  if (!gb) return;
  for (int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (int t = 0; t < threads; ++t) s += partial[size_t(t) * size_t(n) + size_t(j)];
    gb[j] = T(s);
  }
}

}  // namespace

void forward_cpu(const float* x, const float* b, float* y, int64_t rows, int64_t n) { forward(x, b, y, rows, n); }
void forward_cpu(const double* x, const double* b, double* y, int64_t rows, int64_t n) { forward(x, b, y, rows, n); }
void backward_cpu(const float* x, const float* b, const float* gy, float* gx, float* gb, int64_t rows, int64_t n) {
  backward(x, b, gy, gx, gb, rows, n);
}
void backward_cpu(const double* x, const double* b, const double* gy, double* gx, double* gb, int64_t rows,
                  int64_t n) {
  backward(x, b, gy, gx, gb, rows, n);
}

}  // namespace fbg
