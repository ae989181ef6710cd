// Column sums (a reduction over leading dims: the bias gradient, sum(0) of [N, C]) at this file's
// level (vec.h): every column accumulated in double, rows in order, so each level gives the same bits.
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {
constexpr int kDLanes = kWidth / 2;
using VD = double __attribute__((vector_size(kDLanes * 8)));
constexpr int64_t kRowGroup = 4;  // rows added per pass over acc (acc stays in L1/L2, x streams by row)

// One vcvtps2pd from memory (GCC splits __builtin_convertvector into halves here).
RT_VEC_INLINE VD widen(const float* p) {
#if defined(__AVX512F__)
  return (VD)_mm512_maskz_cvtps_pd(0xff, _mm256_loadu_ps(p));  // maskz: GCC 12 warns on the unmasked form
#elif defined(__AVX2__)
  return (VD)_mm256_cvtps_pd(_mm_loadu_ps(p));
#else
  return (VD)_mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
#endif
}
RT_VEC_INLINE VD widen(const double* p) {
  VD v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
RT_VEC_INLINE VD load_d(const double* p) { return widen(p); }
RT_VEC_INLINE void store_d(double* p, VD v) { __builtin_memcpy(p, &v, sizeof v); }

// acc[c] += x[r][c] for rows r in order: kRowGroup rows per pass, each row read front to back (the
// hardware prefetcher's pattern; tiles of columns over many rows ran 1.5x slower on [700, 10000]).
template <typename T>
void sum_cols(double* acc, const T* x, int64_t rows, int64_t stride, int64_t cols) {
  int64_t r = 0;
  for (; r + kRowGroup <= rows; r += kRowGroup) {
    const T* p = x + r * stride;
    int64_t c = 0;
    for (; c + kDLanes <= cols; c += kDLanes) {
      VD a = load_d(acc + c);
      for (int64_t k = 0; k < kRowGroup; ++k) a += widen(p + k * stride + c);
      store_d(acc + c, a);
    }
    for (; c < cols; ++c) {
      double a = acc[c];
      for (int64_t k = 0; k < kRowGroup; ++k) a += double(p[k * stride + c]);
      acc[c] = a;
    }
  }
  for (; r < rows; ++r) {
    const T* p = x + r * stride;
    int64_t c = 0;
    for (; c + kDLanes <= cols; c += kDLanes) store_d(acc + c, load_d(acc + c) + widen(p + c));
    for (; c < cols; ++c) acc[c] += double(p[c]);
  }
}
}  // namespace

void sum_cols_f32(double* acc, const float* x, int64_t rows, int64_t stride, int64_t cols) {
  sum_cols(acc, x, rows, stride, cols);
}
void sum_cols_f64(double* acc, const double* x, int64_t rows, int64_t stride, int64_t cols) {
  sum_cols(acc, x, rows, stride, cols);
}

}  // namespace rt::cpu::RT_CPU_ISA
