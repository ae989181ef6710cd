// arange, linspace, eye.
#include <cmath>

#include "reduce_rows.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"

namespace rt {
namespace {

// Ranges are computed on the host and copied to a GPU in one transfer: the same values
// on every device, and no kernel per formula.
Tensor finish(Tensor t, const TensorOptions& opts) {
  if (!opts.device.is_cpu()) t = t.to(opts.device);
  if (opts.requires_grad) t.requires_grad_();
  return t;
}

std::string scalar_str(const Scalar& s) {
  return s.is_floating() ? std::to_string(s.to_double()) : std::to_string(s.to_int());
}

// Writes f(i) (a double or int64) converted to T for i in [0, n) into contiguous t.
template <typename F>
void fill_indexed(const Tensor& t, const F& f) {
  visit_dtype(t.dtype(), [&]<typename T>() {
    T* p = static_cast<T*>(t.raw_data());
    detail::parallel_rows(t.numel(), t.numel(), [&](int64_t i) {
      const auto v = f(i);
      if constexpr (std::is_same_v<T, bool>) p[i] = v != 0;
      else if constexpr (std::is_integral_v<T>) p[i] = T(int64_t(v));  // wraps like PyTorch for narrow types
      else p[i] = T(compute_t<T>(v));
    });
  });
}

}  // namespace

Tensor arange(const Scalar& end, std::optional<TensorOptions> opts) { return arange(0, end, 1, opts); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, std::optional<TensorOptions> opts) {
  OpGuard guard("arange");
  const bool integral = !start.is_floating() && !end.is_floating() && !step.is_floating();
  TensorOptions o = opts ? *opts : TensorOptions(integral ? kInt64 : kFloat32);
  const std::string args = "start=" + scalar_str(start) + ", end=" + scalar_str(end) + ", step=" + scalar_str(step);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (!std::isfinite(s) || !std::isfinite(e))
    throw ValueError("arange: unsupported range (" + args + "): start and end must be finite" + module_context());
  if (st == 0 || std::isnan(st))
    throw ValueError("arange: step must be nonzero (" + args + ")" + module_context());
  if ((st > 0 && e < s) || (st < 0 && e > s))
    throw ValueError("arange: upper bound and lower bound are inconsistent with the step sign (" + args + ")" +
                     module_context() + ". Hint: use a negative step to count down");
  int64_t n = 0;
  if (integral) {
    const int64_t a = start.to_int(), b = end.to_int(), d = step.to_int();
    const int64_t sgn = d > 0 ? 1 : -1;
    n = (b - a + d - sgn) / d;
  } else {
    const double nd = std::ceil((e - s) / st);
    if (!(nd < 9.2e18)) throw ValueError("arange: the range (" + args + ") has too many elements" + module_context());
    n = int64_t(nd);
  }
  Tensor t = make_tensor({n}, o.dtype);
  if (integral && is_integral(o.dtype, true)) {
    const int64_t a = start.to_int(), d = step.to_int();
    fill_indexed(t, [a, d](int64_t i) { return a + i * d; });
  } else {
    fill_indexed(t, [s, st](int64_t i) { return s + double(i) * st; });
  }
  return finish(t, o);
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions opts) {
  OpGuard guard("linspace");
  if (steps < 0)
    throw ValueError("linspace: number of steps must be non-negative, got " + std::to_string(steps) + module_context());
  Tensor t = make_tensor({steps}, opts.dtype);
  if (steps == 1) {
    fill_indexed(t, [start](int64_t) { return start; });
  } else if (steps > 1) {
    // Symmetric from both ends (PyTorch's kernel): the last value is exactly `end`.
    const double step = (end - start) / double(steps - 1);
    const int64_t half = steps / 2;
    fill_indexed(t, [=](int64_t i) { return i < half ? start + step * double(i) : end - step * double(steps - 1 - i); });
  }
  return finish(t, opts);
}

Tensor eye(int64_t n, int64_t m, TensorOptions opts) {
  OpGuard guard("eye");
  if (m == -1) m = n;
  if (n < 0 || m < 0)
    throw ValueError("eye: expected non-negative sizes, got n=" + std::to_string(n) + " m=" + std::to_string(m) +
                     module_context());
  Tensor t = make_tensor({n, m}, opts.dtype);
  fill_indexed(t, [m](int64_t i) { return int64_t(i / m == i % m); });
  return finish(t, opts);
}

}  // namespace rt
