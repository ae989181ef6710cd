// Float32 softmax and log_softmax, forward and backward, at this file's level (vec.h): rows along the
// last dim, and blocks of columns for a strided dim. The formulas are engine/src/ops/softmax.cpp's.
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {

void softmax_row(float* y, const float* x, int64_t n, bool log) {
  const float mx = row_max(x, n);
  const VF vm = splat(mx);
  if (log) {
    const double sum = row_sum(n, [&](int64_t i, int64_t rem) {
      return select(lanes_below(rem), vexp(load_n(x + i, rem, kNegInf) - vm), splat(0.f));
    });
    const VF shift = splat(float(double(mx) + __builtin_log(sum)));
    for_vectors(n, [&](int64_t i, int64_t rem) { store_n(y + i, load_n(x + i, rem) - shift, rem); });
    return;
  }
  const double sum = row_sum(n, [&](int64_t i, int64_t rem) {
    const VF e = vexp(load_n(x + i, rem, kNegInf) - vm);
    store_n(y + i, e, rem);
    return select(lanes_below(rem), e, splat(0.f));
  });
  const VF scale = splat(float(1.0 / sum));
  for_vectors(n, [&](int64_t i, int64_t rem) { store_n(y + i, load_n(y + i, rem) * scale, rem); });
}

// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
void softmax_backward_row(float* gx, const float* y, const float* g, int64_t n, bool log) {
  if (log) {
    const VF s = splat(float(row_sum(n, [&](int64_t i, int64_t rem) { return load_n(g + i, rem); })));
    for_vectors(n, [&](int64_t i, int64_t rem) {
      store_n(gx + i, load_n(g + i, rem) - vexp(load_n(y + i, rem)) * s, rem);
    });
    return;
  }
  const VF dot =
      splat(float(row_sum(n, [&](int64_t i, int64_t rem) { return load_n(g + i, rem) * load_n(y + i, rem); })));
  for_vectors(n, [&](int64_t i, int64_t rem) {
    store_n(gx + i, load_n(y + i, rem) * (load_n(g + i, rem) - dot), rem);
  });
}

}  // namespace

void softmax_rows_f32(float* y, const float* x, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) softmax_row(y + r * n, x + r * n, n, log);
}

void softmax_backward_rows_f32(float* gx, const float* y, const float* g, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) softmax_backward_row(gx + r * n, y + r * n, g + r * n, n, log);
}

// Columns [0, w) of a block whose element (d, j) sits at d * stride + j: kWidth columns at a time,
// each column reduced in order of d in float (softmax.cpp's per-column sums).
void softmax_cols_f32(float* y, const float* x, int64_t n, int64_t stride, int64_t w, bool log) {
  for_vectors(w, [&](int64_t j, int64_t rem) {
    VF mx = splat(kNegInf);
    for (int64_t d = 0; d < n; ++d) mx = vmax(load_n(x + d * stride + j, rem, kNegInf), mx);
    VF sum = splat(0.f);
    for (int64_t d = 0; d < n; ++d) sum += vexp(load_n(x + d * stride + j, rem, kNegInf) - mx);
    if (log) {
      const VF shift = mx + vlog(sum);
      for (int64_t d = 0; d < n; ++d) store_n(y + d * stride + j, load_n(x + d * stride + j, rem) - shift, rem);
    } else {
      const VF scale = 1.f / sum;
      for (int64_t d = 0; d < n; ++d)
        store_n(y + d * stride + j, vexp(load_n(x + d * stride + j, rem, kNegInf) - mx) * scale, rem);
    }
  });
}

void softmax_backward_cols_f32(float* gx, const float* y, const float* g, int64_t n, int64_t stride, int64_t w,
                               bool log) {
  for_vectors(w, [&](int64_t j, int64_t rem) {
    VF dot = splat(0.f);
    for (int64_t d = 0; d < n; ++d) {
      const int64_t k = d * stride + j;
      dot += log ? load_n(g + k, rem) : load_n(g + k, rem) * load_n(y + k, rem);
    }
    for (int64_t d = 0; d < n; ++d) {
      const int64_t k = d * stride + j;
      const VF gv = load_n(g + k, rem), yv = load_n(y + k, rem);
      store_n(gx + k, log ? gv - vexp(yv) * dot : yv * (gv - dot), rem);
    }
  });
}

}  // namespace rt::cpu::RT_CPU_ISA
