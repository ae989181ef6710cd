// Helpers shared by the row-wise nn kernels (softmax, losses, norms, embedding, dropout).
#pragma once
#include <string>

#include "cpu/loops.h"
#include "inplace.h"
#include "rt/error.h"

namespace rt::nnops {

// Calls f.template operator()<T>() for a floating dtype; DTypeError naming `op` and `what` otherwise.
template <typename F>
void visit_float(ScalarType t, const char* op, const char* what, F&& f) {
  switch (t) {
    case kFloat16: return f.template operator()<Half>();
    case kBFloat16: return f.template operator()<BFloat16>();
    case kFloat32: return f.template operator()<float>();
    case kFloat64: return f.template operator()<double>();
    default:
      throw DTypeError(std::string(op) + ": expected a floating point " + what + ", got " + std::string(dtype_name(t)) +
                       module_context() + ". Hint: convert it first, e.g. x.to(rt::kFloat32)");
  }
}
template <typename F>
void visit_float(ScalarType t, const char* op, F&& f) {
  visit_float(t, op, "input", std::forward<F>(f));
}

// A detached, contiguous copy of `t` in dtype `dt` (no copy when it already is one).
inline Tensor dense(const Tensor& t, ScalarType dt) {
  Tensor c = detail::convert(t.detach(), dt);
  return c.is_contiguous() ? c : c.contiguous();
}

// f(i) for i in [0, n), across OpenMP threads when `work` elements justify it.
template <typename F>
void parallel_for(int64_t n, int64_t work, F&& f) {
  if (work >= cpu::kParallelGrain && n > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}

}  // namespace rt::nnops
