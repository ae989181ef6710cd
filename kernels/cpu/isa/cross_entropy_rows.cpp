// Float32 rows of cross entropy on class indices at this file's level (vec.h): the per-row log-sum-exp
// (and weighted logit sum for label smoothing) of the forward, and the backward's row of
// softmax-minus-target; engine/src/ops/loss.cpp composes the per-sample terms.
#include "../isa_kernels.h"
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

void log_softmax_stats_f32(double* lse, double* wdot, const float* x, const float* w, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    const float mx = row_max(xr, n);
    const VF vm = splat(mx);
    const double sum = row_sum(n, [&](int64_t i, int64_t rem) {
      return select(lanes_below(rem), vexp(load_n(xr + i, rem, kNegInf) - vm), splat(0.f));
    });
    lse[r] = double(mx) + __builtin_log(sum);
    if (wdot)
      wdot[r] = row_sum(n, [&](int64_t i, int64_t rem) {
        const VF v = load_n(xr + i, rem);
        return w ? v * load_n(w + i, rem) : v;
      });
  }
}

void cross_entropy_backward_row_f32(float* gx, const float* x, const float* w, int64_t n, float shift, float scale,
                                    float wscale) {
  const VF vs = splat(shift), vp = splat(scale), vk = splat(wscale);
  for_vectors(n, [&](int64_t i, int64_t rem) {
    const VF p = vexp(load_n(x + i, rem) - vs) * vp;
    store_n(gx + i, p - (w ? vk * load_n(w + i, rem) : vk), rem);
  });
}

}  // namespace rt::cpu::RT_CPU_ISA
