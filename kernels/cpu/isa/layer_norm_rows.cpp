// Float32 layer_norm rows, forward and backward, at this file's level (vec.h); the formulas of
// engine/src/ops/norm.cpp (two-pass variance, float sums per row, statistics kept in double).
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

void layer_norm_rows_f32(float* y, double* mean, double* rstd, const float* x, const float* w, const float* b,
                         int64_t rows, int64_t d, float eps) {
  const VF zero = splat(0.f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mu = float(row_sum(d, [&](int64_t i, int64_t rem) { return load_n(xr + i, rem); }) / double(d));
    const VF vmu = splat(mu);
    const double var = row_sum(d, [&](int64_t i, int64_t rem) {
      const VF c = select(lanes_below(rem), load_n(xr + i, rem) - vmu, zero);
      return c * c;
    });
    const float rs = 1.f / __builtin_sqrtf(float(var / double(d)) + eps);
    mean[r] = double(mu);
    rstd[r] = double(rs);
    const VF vrs = splat(rs);
    for_vectors(d, [&](int64_t i, int64_t rem) {
      VF h = (load_n(xr + i, rem) - vmu) * vrs;
      if (w) h *= load_n(w + i, rem);
      if (b) h += load_n(b + i, rem);
      store_n(yr + i, h, rem);
    });
  }
}

// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w, xhat = (x - mean) * rstd;
// dw += g * xhat and db += g over the rows, in float.
void layer_norm_backward_rows_f32(float* dx, float* dw, float* db, const float* x, const float* w, const float* g,
                                  const double* mean, const double* rstd, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    const float* gr = g + r * d;
    const VF mu = splat(float(mean[r])), rs = splat(float(rstd[r]));
    if (dw || db)
      for_vectors(d, [&](int64_t i, int64_t rem) {
        const VF gv = load_n(gr + i, rem);
        if (dw) store_n(dw + i, load_n(dw + i, rem) + gv * ((load_n(xr + i, rem) - mu) * rs), rem);
        if (db) store_n(db + i, load_n(db + i, rem) + gv, rem);
      });
    if (!dx) continue;
    double sa = 0, sb = 0;
    for (int64_t c = 0; c < d; c += kRowSumChunk) {
      const int64_t end = c + kRowSumChunk < d ? c + kRowSumChunk : d;
      VF va = splat(0.f), vb = va;
      for_vectors(end - c, [&](int64_t i, int64_t rem) {
        const int64_t k = c + i;
        VF gw = load_n(gr + k, rem);
        if (w) gw *= load_n(w + k, rem);
        const VI valid = lanes_below(rem);  // padded lanes add 0 even where rstd is inf
        va += select(valid, gw, splat(0.f));
        vb += select(valid, gw * ((load_n(xr + k, rem) - mu) * rs), splat(0.f));
      });
      sa += double(hsum(va));
      sb += double(hsum(vb));
    }
    const VF ma = splat(float(sa / double(d))), mb = splat(float(sb / double(d)));
    float* o = dx + r * d;
    for_vectors(d, [&](int64_t i, int64_t rem) {
      VF gw = load_n(gr + i, rem);
      if (w) gw *= load_n(w + i, rem);
      store_n(o + i, rs * (gw - ma - (load_n(xr + i, rem) - mu) * rs * mb), rem);
    });
  }
}

}  // namespace rt::cpu::RT_CPU_ISA
