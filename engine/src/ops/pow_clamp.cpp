// pow (three forms), square, clamp, maximum, minimum, and the in-place pow_ and clamp_.
#include <limits>

#include "../amp/autocast_policy.h"
#include "composed.h"
#include "pointwise.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;
using detail::convert;
using detail::is_float_v;
using detail::map_grad;
using detail::map_grad3;

namespace {

// PyTorch's integer pow: wraps on overflow; negative exponents give 0 unless |base| == 1.
template <typename I>
I int_pow(I base, I exp) {
  if constexpr (std::is_signed_v<I>) {
    if (exp < 0) return base == 1 ? I(1) : base == -1 ? I((exp & 1) ? -1 : 1) : I(0);
  }
  using U = std::make_unsigned_t<I>;
  U r = 1, b = U(base);
  for (U e = U(exp); e != 0; e >>= 1) {
    if (e & 1) r = U(r * b);
    b = U(b * b);
  }
  return I(r);
}

ScalarType pow_dtype(const Tensor& base, const Tensor& exponent, const char* op) {
  const ScalarType dt = result_type(base, exponent);
  if (dt == kBool)
    throw DTypeError(std::string(op) + ": bool is not supported (base shape " + format_shape(base.sizes()) +
                     ", exponent shape " + format_shape(exponent.sizes()) +
                     "). Hint: convert to an integer or float dtype");
  return dt;
}

ScalarType pow_scalar_dtype(const Tensor& a, const Scalar& e, const char* op) {
  const ScalarType dt = pow_dtype(a, scalar_to_tensor(e), op);
  if (!is_floating(dt) && e.to_int() < 0)
    throw ValueError(std::string(op) + ": integers to negative integer powers are not allowed (base dtype " +
                     std::string(dtype_name(a.dtype())) + ", shape " + format_shape(a.sizes()) + ", exponent " +
                     std::to_string(e.to_int()) + "). Hint: convert the base with .to(rt::kFloat32)");
  return dt;
}

// out = a ** e with a already in out's dtype. Common exponents avoid std::pow, as in PyTorch.
void pow_scalar_into(const Tensor& out, const Tensor& a, const Scalar& e) {
  if (!out.is_cpu()) return dispatch::binary_scalar(out.device(), dispatch::BinaryOp::Pow, out, a, e);
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  visit_dtype(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      return;  // excluded by pow_dtype
    } else if constexpr (!is_float_v<T>) {
      const C ie = C(e.to_int());
      cpu::unary_kernel<T>(loop, [ie](C x) { return int_pow(x, ie); });
    } else {
      const double d = e.to_double();
      const C ce = C(d);
      if (d == 2) cpu::unary_kernel<T>(loop, [](C x) { return x * x; });
      else if (d == 3) cpu::unary_kernel<T>(loop, [](C x) { return x * x * x; });
      else if (d == 0.5) cpu::unary_kernel<T>(loop, [](C x) { return std::sqrt(x); });
      else if (d == -0.5) cpu::unary_kernel<T>(loop, [](C x) { return C(1) / std::sqrt(x); });
      else if (d == -1) cpu::unary_kernel<T>(loop, [](C x) { return C(1) / x; });
      else if (d == -2) cpu::unary_kernel<T>(loop, [](C x) { return C(1) / (x * x); });
      else if (d == 1) cpu::unary_kernel<T>(loop, [](C x) { return x; });
      else if (d == 0) cpu::unary_kernel<T>(loop, [](C) { return C(1); });
      else cpu::unary_kernel<T>(loop, [ce](C x) { return std::pow(x, ce); });
    }
  });
}

// out = a ** e elementwise, both already in out's dtype and broadcast to its shape.
void pow_tensor_into(const Tensor& out, const Tensor& a, const Tensor& e) {
  if (!out.is_cpu()) return dispatch::binary(out.device(), dispatch::BinaryOp::Pow, out, a, e, 1.0);
  cpu::ElementwiseLoop loop = cpu_loop(out, {a, e});
  visit_dtype(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) return;
    else if constexpr (!is_float_v<T>) cpu::binary_kernel<T>(loop, [](C x, C y) { return int_pow(x, y); });
    else cpu::binary_kernel<T>(loop, [](C x, C y) { return std::pow(x, y); });
  });
}

// PowBackward0: grad * e * x^(e-1), and zero for e == 0.
Tensor pow_scalar_backward(const Tensor& grad, const Tensor& x, double e) {
  if (e == 0) return zeros(grad.sizes(), TensorOptions(x.dtype()).with_device(x.device()));
  if (!x.is_cpu()) return e == 2 ? grad * x * Scalar(2.0) : grad * pow(x, Scalar(e - 1)) * Scalar(e);
  if (e == 2) return map_grad("pow_backward", grad, x, [](auto g, auto v) { return decltype(v)(2) * g * v; });
  return map_grad("pow_backward", grad, x, [e](auto g, auto v) {
    using C = decltype(v);
    return g * C(e) * std::pow(v, C(e - 1));
  });
}

Tensor pow_exponent_backward(const Tensor& grad, const Tensor& base, const Tensor& exponent, ScalarType dt) {
  if (!grad.is_cpu()) return detail::composed::pow_exponent_backward(grad, base, exponent, dt);
  return map_grad3("pow_backward_exponent", dt, grad, base, exponent, [](auto g, auto x, auto y) {
    using C = decltype(x);
    return (x == C(0) && y >= C(0)) ? C(0) : g * std::pow(x, y) * std::log(x);
  });
}

ScalarType clamp_dtype(const Tensor& a, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi,
                       const char* op) {
  if (!lo && !hi)
    throw ValueError(std::string(op) + ": at least one of 'min' or 'max' must not be None (input shape " +
                     format_shape(a.sizes()) + ")");
  // Bounds promote like wrapped numbers, where only their category counts.
  Scalar probe = false;
  for (const auto* b : {&lo, &hi}) {
    if (!*b) continue;
    if ((*b)->is_floating()) probe = 0.0;
    else if ((*b)->is_integral() && !probe.is_floating()) probe = int64_t(0);
  }
  return result_type(a, scalar_to_tensor(probe));
}

// The CPU kernel of dispatch::clamp.
void clamp_cpu(const Tensor& out, const Tensor& a, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  visit_dtype(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    auto bound = [](const Scalar& s) { return is_float_v<T> ? C(s.to_double()) : C(s.to<T>()); };
    if constexpr (is_float_v<T>) {
      if ((lo && std::isnan(lo->to_double())) || (hi && std::isnan(hi->to_double()))) {
        cpu::unary_kernel<T>(loop, [](C) { return std::numeric_limits<C>::quiet_NaN(); });
        return;
      }
    }
    if (lo && hi) {
      const C l = bound(*lo), h = bound(*hi);
      cpu::unary_kernel<T>(loop, [l, h](C x) {
        const C y = x < l ? l : x;
        return y > h ? h : y;
      });
    } else if (lo) {
      const C l = bound(*lo);
      cpu::unary_kernel<T>(loop, [l](C x) { return x < l ? l : x; });
    } else {
      const C h = bound(*hi);
      cpu::unary_kernel<T>(loop, [h](C x) { return x > h ? h : x; });
    }
  });
}
RT_REGISTER_KERNEL(dispatch::clamp, DeviceType::CPU, clamp_cpu);

void clamp_into(const Tensor& out, const Tensor& a, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  dispatch::clamp(out.device(), out, a, lo, hi);
}

Tensor extremum(bool is_max, const Tensor& a, const Tensor& b) {
  const char* name = is_max ? "maximum" : "minimum";
  OpGuard guard(name, a, b);
  const ScalarType dt = result_type(a, b);
  const Shape shape = a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = make_tensor(shape, dt, detail::op_device(name, a, b));
  const Tensor ac = convert(a, dt), bc = convert(b, dt);  // the loop keeps raw pointers into them
  if (!out.is_cpu()) {
    dispatch::binary(out.device(), is_max ? dispatch::BinaryOp::Maximum : dispatch::BinaryOp::Minimum, out, ac, bc, 1.0);
  } else {
    cpu::ElementwiseLoop loop = cpu_loop(out, {ac, bc});
    visit_dtype(dt, [&]<typename T>() {
      using C = compute_t<T>;
      if constexpr (is_float_v<T>) {  // NaN in either operand propagates
        if (is_max) cpu::binary_kernel<T>(loop, [](C x, C y) { return detail::blend((x != x) | (x > y), x, y); });
        else cpu::binary_kernel<T>(loop, [](C x, C y) { return detail::blend((x != x) | (x < y), x, y); });
      } else {
        if (is_max) cpu::binary_kernel<T>(loop, [](C x, C y) { return x > y ? x : y; });
        else cpu::binary_kernel<T>(loop, [](C x, C y) { return x < y ? x : y; });
      }
    });
  }
  if (autograd::any_requires_grad(a, b) && is_floating(dt)) {
    // Ties split the gradient evenly; the operand that loses gets none.
    auto backward = [dt, is_max](const Tensor& g, const Tensor& x, const Tensor& y) {
      if (!g.is_cpu()) return detail::composed::extremum_backward(is_max, g, x, y);
      const char* op = is_max ? "maximum_backward" : "minimum_backward";
      return map_grad3(op, dt, g, x, y, [is_max](auto gv, auto xv, auto yv) {
        using V = decltype(gv);
        const bool loses = is_max ? xv < yv : xv > yv;
        return loses ? V(0) : (xv == yv ? gv * V(0.5) : gv);
      });
    };
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    record(is_max ? "MaximumBackward0" : "MinimumBackward0", {a, b}, {out},
           [sa = SavedTensor(a), sb = SavedTensor(b), backward, ga, gb](const TensorList& g) {
             Tensor x = sa.unpack(), y = sb.unpack();
             return TensorList{ga ? backward(g[0], x, y) : Tensor(), gb ? backward(g[0], y, x) : Tensor()};
           });
  }
  return out;
}

}  // namespace

Tensor pow(const Tensor& a, const Scalar& exponent) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a}); ac) return pow(ac[0], exponent);
  OpGuard guard("pow", a);
  const ScalarType dt = pow_scalar_dtype(a, exponent, "pow");
  Tensor out = make_tensor(a.sizes(), dt, a.device());
  pow_scalar_into(out, convert(a, dt), exponent);
  if (autograd::any_requires_grad(a))
    record("PowBackward0", {a}, {out}, [sa = SavedTensor(a), e = exponent.to_double()](const TensorList& g) {
      return TensorList{pow_scalar_backward(g[0], sa.unpack(), e)};
    });
  return out;
}

Tensor pow(const Tensor& a, const Tensor& exponent) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&a, &exponent}); ac)
    return pow(ac[0], ac[1]);
  OpGuard guard("pow", a, exponent);
  const ScalarType dt = pow_dtype(a, exponent, "pow");
  const Shape shape = a.sizes() == exponent.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), exponent.sizes(), "pow");
  Tensor out = make_tensor(shape, dt, detail::op_device("pow", a, exponent));
  pow_tensor_into(out, convert(a, dt), convert(exponent, dt));
  if (autograd::any_requires_grad(a, exponent) && is_floating(dt)) {
    const bool ga = a.requires_grad(), ge = exponent.requires_grad();
    record("PowBackward1", {a, exponent}, {out},
           [sa = SavedTensor(a), se = SavedTensor(exponent), dt, ga, ge](const TensorList& g) {
             Tensor x = sa.unpack(), y = se.unpack();
             Tensor gx, gy;
             if (ga && !g[0].is_cpu())
               gx = detail::composed::pow_base_backward(g[0], x, y, dt);
             else if (ga)
               gx = map_grad3("pow_backward_self", dt, g[0], x, y, [](auto gv, auto xv, auto yv) {
                 using C = decltype(xv);
                 return yv == C(0) ? C(0) : gv * yv * std::pow(xv, yv - C(1));
               });
             if (ge) gy = pow_exponent_backward(g[0], x, y, dt);
             return TensorList{gx, gy};
           });
  }
  return out;
}

Tensor pow(const Scalar& base, const Tensor& exponent) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&exponent}); ac) return pow(base, ac[0]);
  OpGuard guard("pow", exponent);
  Tensor b = scalar_to_tensor(base);
  const ScalarType dt = pow_dtype(b, exponent, "pow");
  Tensor out = make_tensor(exponent.sizes(), dt, exponent.device());
  pow_tensor_into(out, convert(b, dt), convert(exponent, dt));
  if (autograd::any_requires_grad(exponent) && is_floating(dt))
    record("PowBackward2", {exponent}, {out}, [b, se = SavedTensor(exponent), dt](const TensorList& g) {
      return TensorList{pow_exponent_backward(g[0], b, se.unpack(), dt)};
    });
  return out;
}

Tensor square(const Tensor& a) {
  OpGuard guard("square", a);
  Tensor x = a.dtype() == kBool ? convert(a, kInt64) : a;
  Tensor out = detail::map_same(x, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_integral_v<C>) return C(std::make_unsigned_t<C>(v) * std::make_unsigned_t<C>(v));
    else return v * v;
  }, detail::DeviceUnary{dispatch::UnaryOp::Square});
  if (autograd::any_requires_grad(a))
    record("PowBackward0", {a}, {out}, [sa = SavedTensor(a)](const TensorList& g) {
      return TensorList{pow_scalar_backward(g[0], sa.unpack(), 2.0)};
    });
  return out;
}

Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max) {
  OpGuard guard("clamp", a);
  const ScalarType dt = clamp_dtype(a, min, max, "clamp");
  Tensor out = make_tensor(a.sizes(), dt, a.device());
  clamp_into(out, convert(a, dt), min, max);
  if (autograd::any_requires_grad(a) && is_floating(dt)) {
    const double inf = std::numeric_limits<double>::infinity();
    const double lo = min ? min->to_double() : -inf, hi = max ? max->to_double() : inf;
    record("ClampBackward1", {a}, {out}, [sa = SavedTensor(a), lo, hi](const TensorList& g) {
      const Tensor x = sa.unpack();
      if (!x.is_cpu())  // the kept range as a mask, composed of ops
        return TensorList{g[0] * logical_and(ge(x, scalar_to_tensor(lo)), le(x, scalar_to_tensor(hi))).to(g[0].dtype())};
      return TensorList{map_grad("clamp_backward", g[0], sa.unpack(), [lo, hi](auto gv, auto x) {
        using C = decltype(x);
        return detail::blend((x >= C(lo)) & (x <= C(hi)), gv, C(0));
      })};
    });
  }
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(true, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(false, a, b); }

Tensor& clamp_(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  OpGuard guard("clamp_", self);
  if (autograd::any_requires_grad(self))
    return detail::inplace_with_history(self, "clamp_", [&](const Tensor& s) { return clamp(s, min, max); });
  detail::check_inplace_dtype(clamp_dtype(self, min, max, "clamp_"), self, "clamp_");
  clamp_into(self, self, min, max);
  self.bump_version();
  return self;
}

Tensor& pow_(Tensor& self, const Scalar& exponent) {
  OpGuard guard("pow_", self);
  if (autograd::any_requires_grad(self))
    return detail::inplace_with_history(self, "pow_", [&](const Tensor& s) { return pow(s, exponent); });
  detail::check_inplace_dtype(pow_scalar_dtype(self, exponent, "pow_"), self, "pow_");
  pow_scalar_into(self, self, exponent);
  self.bump_version();
  return self;
}

}  // namespace rt
