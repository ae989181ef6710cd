// Adam/AdamW and SGD, one pass over a range of a parameter, at this file's level. Each element
// runs the optimizers' chain of tensor ops (engine/src/optim/functional.cpp) in registers, in the
// same order and rounding: kernels/cuda/optimizer_step.cu's element functions, on the CPU.
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {

template <typename T>
RT_VEC_INLINE T vsqrt(T x) {
  if constexpr (sizeof(T) == 4) return __builtin_sqrtf(x);
  else return __builtin_sqrt(x);
}

// The options are template arguments so that each loop is branch-free and vectorises.
template <typename T, bool kDecay, bool kDecoupled, bool kAmsgrad, bool kMaximize>
void adam_range(const AdamStepArgs<T>& k, int64_t begin, int64_t end) {
  T* __restrict p = k.param;
  T* __restrict m = k.exp_avg;
  T* __restrict v = k.exp_avg_sq;
  T* __restrict vmax = k.max_exp_avg_sq;
  const T* __restrict grad = k.grad;
  for (int64_t i = begin; i < end; ++i) {
    T g = kMaximize ? -grad[i] : grad[i];
    T pi = p[i];
    if constexpr (kDecay) {
      if constexpr (kDecoupled) pi = pi * k.decay;
      else g = g + k.wd * pi;
    }
    const T mi = m[i] + k.w1 * (g - m[i]);
    T vi = v[i] * k.beta2;
    vi = vi + k.w2 * g * g;
    T denom;
    if constexpr (kAmsgrad) {
      const T a = vmax[i];
      const T mx = (a != a || a > vi) ? a : vi;  // maximum(v_max, v): a NaN in either wins
      vmax[i] = mx;
      denom = vsqrt(mx);
    } else {
      denom = vsqrt(vi);
    }
    denom = denom / k.bc2_sqrt;
    denom = denom + k.eps;
    p[i] = pi + k.neg_step * mi / denom;
    m[i] = mi;
    v[i] = vi;
  }
}

template <typename T>
void adam(const AdamStepArgs<T>& k, int64_t b, int64_t e) {
  const bool d = k.weight_decay, c = k.decoupled, a = k.max_exp_avg_sq != nullptr, x = k.maximize;
  const int key = (d ? 8 : 0) | (c ? 4 : 0) | (a ? 2 : 0) | (x ? 1 : 0);
  switch (key) {
    case 0: return adam_range<T, false, false, false, false>(k, b, e);
    case 1: return adam_range<T, false, false, false, true>(k, b, e);
    case 2: return adam_range<T, false, false, true, false>(k, b, e);
    case 3: return adam_range<T, false, false, true, true>(k, b, e);
    case 4: return adam_range<T, false, true, false, false>(k, b, e);
    case 5: return adam_range<T, false, true, false, true>(k, b, e);
    case 6: return adam_range<T, false, true, true, false>(k, b, e);
    case 7: return adam_range<T, false, true, true, true>(k, b, e);
    case 8: return adam_range<T, true, false, false, false>(k, b, e);
    case 9: return adam_range<T, true, false, false, true>(k, b, e);
    case 10: return adam_range<T, true, false, true, false>(k, b, e);
    case 11: return adam_range<T, true, false, true, true>(k, b, e);
    case 12: return adam_range<T, true, true, false, false>(k, b, e);
    case 13: return adam_range<T, true, true, false, true>(k, b, e);
    case 14: return adam_range<T, true, true, true, false>(k, b, e);
    default: return adam_range<T, true, true, true, true>(k, b, e);
  }
}

template <typename T, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst, bool kMaximize>
void sgd_range(const SgdStepArgs<T>& k, int64_t begin, int64_t end) {
  T* __restrict p = k.param;
  T* __restrict buf = k.momentum_buffer;
  const T* __restrict grad = k.grad;
  for (int64_t i = begin; i < end; ++i) {
    T g = kMaximize ? -grad[i] : grad[i];
    if constexpr (kDecay) g = g + k.wd * p[i];
    if constexpr (kMomentum) {
      T b;
      if constexpr (kFirst) b = g;
      else b = buf[i] * k.momentum + k.w_damp * g;
      buf[i] = b;
      g = kNesterov ? g + k.momentum * b : b;
    }
    p[i] = p[i] + k.neg_lr * g;
  }
}

template <typename T, bool kDecay, bool kMaximize>
void sgd_momentum(const SgdStepArgs<T>& k, int64_t b, int64_t e) {
  if (k.momentum_buffer == nullptr) return sgd_range<T, kDecay, false, false, false, kMaximize>(k, b, e);
  if (k.first_step) {
    if (k.nesterov) return sgd_range<T, kDecay, true, true, true, kMaximize>(k, b, e);
    return sgd_range<T, kDecay, true, false, true, kMaximize>(k, b, e);
  }
  if (k.nesterov) return sgd_range<T, kDecay, true, true, false, kMaximize>(k, b, e);
  return sgd_range<T, kDecay, true, false, false, kMaximize>(k, b, e);
}

template <typename T>
void sgd(const SgdStepArgs<T>& k, int64_t b, int64_t e) {
  if (k.weight_decay) return k.maximize ? sgd_momentum<T, true, true>(k, b, e) : sgd_momentum<T, true, false>(k, b, e);
  return k.maximize ? sgd_momentum<T, false, true>(k, b, e) : sgd_momentum<T, false, false>(k, b, e);
}

}  // namespace

void adam_f32(const AdamStepArgs<float>& a, int64_t begin, int64_t end) { adam(a, begin, end); }
void adam_f64(const AdamStepArgs<double>& a, int64_t begin, int64_t end) { adam(a, begin, end); }
void sgd_f32(const SgdStepArgs<float>& a, int64_t begin, int64_t end) { sgd(a, begin, end); }
void sgd_f64(const SgdStepArgs<double>& a, int64_t begin, int64_t end) { sgd(a, begin, end); }

}  // namespace rt::cpu::RT_CPU_ISA
