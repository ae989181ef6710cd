// a + alpha * b, a - alpha * b, a * b, a / b over contiguous arrays or a scalar operand, at this
// file's level. The arithmetic is engine/src/ops/arith.cpp's, so every level gives its bits.
#include "table.h"
#include "vec.h"

namespace rt::cpu::RT_CPU_ISA {

namespace {

// A and B read element i (an array) or element 0 (a scalar); the loops vectorise either way.
template <typename T, typename A, typename B>
RT_VEC_INLINE void apply(VecBinary op, T* o, A a, B b, int64_t n, T alpha) {
  switch (op) {
    case VecBinary::Add:
      if (alpha == T(1)) for (int64_t i = 0; i < n; ++i) o[i] = a(i) + b(i);
      else for (int64_t i = 0; i < n; ++i) o[i] = a(i) + alpha * b(i);
      return;
    case VecBinary::Sub:
      if (alpha == T(1)) for (int64_t i = 0; i < n; ++i) o[i] = a(i) - b(i);
      else for (int64_t i = 0; i < n; ++i) o[i] = a(i) - alpha * b(i);
      return;
    case VecBinary::Mul: for (int64_t i = 0; i < n; ++i) o[i] = a(i) * b(i); return;
    case VecBinary::Div: for (int64_t i = 0; i < n; ++i) o[i] = a(i) / b(i); return;
  }
}

template <typename T>
void binary(VecBinary op, T* o, const T* a, int64_t as, const T* b, int64_t bs, int64_t n, T alpha) {
  auto array = [](const T* p) { return [p](int64_t i) { return p[i]; }; };
  auto scalar = [](const T* p) { const T v = p[0]; return [v](int64_t) { return v; }; };
  if (as != 0 && bs != 0) apply(op, o, array(a), array(b), n, alpha);
  else if (as != 0) apply(op, o, array(a), scalar(b), n, alpha);
  else if (bs != 0) apply(op, o, scalar(a), array(b), n, alpha);
  else apply(op, o, scalar(a), scalar(b), n, alpha);
}

}  // namespace

void binary_f32(VecBinary op, float* o, const float* a, int64_t as, const float* b, int64_t bs, int64_t n,
                float alpha) {
  binary(op, o, a, as, b, bs, n, alpha);
}

void binary_f64(VecBinary op, double* o, const double* a, int64_t as, const double* b, int64_t bs, int64_t n,
                double alpha) {
  binary(op, o, a, as, b, bs, n, alpha);
}

}  // namespace rt::cpu::RT_CPU_ISA
