// Column sums (a reduction over leading dims: the bias gradient, sum(0) of [N, C]) at this file's
// level (vec.h): every column accumulated in double, rows in order, so each level gives the same bits.
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {
constexpr int kDLanes = kWidth / 2;
using VD = double __attribute__((vector_size(kDLanes * 8)));
using VH = float __attribute__((vector_size(kDLanes * 4)));
constexpr int kTileVectors = 8;                       // independent accumulators per tile
constexpr int64_t kTile = kTileVectors * kDLanes;     // columns per tile
constexpr int64_t kRowBlock = 64;                     // rows per pass over the columns (stays in L2)

RT_VEC_INLINE VD widen(const float* p) {
  VH h;
  __builtin_memcpy(&h, p, sizeof h);
  return __builtin_convertvector(h, VD);
}
RT_VEC_INLINE VD widen(const double* p) {
  VD v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
RT_VEC_INLINE VD load_d(const double* p) { return widen(p); }
RT_VEC_INLINE void store_d(double* p, VD v) { __builtin_memcpy(p, &v, sizeof v); }

template <typename T>
void sum_cols(double* acc, const T* x, int64_t rows, int64_t stride, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    const int64_t r1 = r0 + kRowBlock < rows ? r0 + kRowBlock : rows;
    int64_t c = 0;
    for (; c + kTile <= cols; c += kTile) {
      VD a[kTileVectors];
      for (int k = 0; k < kTileVectors; ++k) a[k] = load_d(acc + c + k * kDLanes);
      for (int64_t r = r0; r < r1; ++r) {
        const T* p = x + r * stride + c;
        for (int k = 0; k < kTileVectors; ++k) a[k] += widen(p + k * kDLanes);
      }
      for (int k = 0; k < kTileVectors; ++k) store_d(acc + c + k * kDLanes, a[k]);
    }
    for (; c + kDLanes <= cols; c += kDLanes) {
      VD a = load_d(acc + c);
      for (int64_t r = r0; r < r1; ++r) a += widen(x + r * stride + c);
      store_d(acc + c, a);
    }
    for (; c < cols; ++c) {
      double a = acc[c];
      for (int64_t r = r0; r < r1; ++r) a += double(x[r * stride + c]);
      acc[c] = a;
    }
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
