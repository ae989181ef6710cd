// Comparisons, logical ops, isnan/isinf (bool results, no autograd), where and masked_fill.
#include <limits>

#include "pointwise.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;
using detail::convert;

namespace {

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };  // in the order of dispatch::CompareOp

Shape broadcast_of(const Tensor& a, const Tensor& b, const char* op) {
  return a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), op);
}

Tensor compare(Cmp kind, const char* name, const Tensor& a, const Tensor& b) {
  OpGuard guard(name, a, b);
  const ScalarType dt = result_type(a, b);
  Tensor out = make_tensor(broadcast_of(a, b, name), kBool, detail::op_device(name, a, b));
  if (!out.is_cpu()) {
    dispatch::compare(out.device(), dispatch::CompareOp(int(kind)), out, a, b, dt);
    return out;
  }
  const Tensor ac = convert(a, dt), bc = convert(b, dt);  // the loop keeps raw pointers into them
  cpu::ElementwiseLoop loop = cpu_loop(out, {ac, bc});
  visit_dtype(dt, [&]<typename T>() {
    using C = compute_t<T>;
    switch (kind) {
      case Cmp::Eq: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x == y; }); break;
      case Cmp::Ne: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x != y; }); break;
      case Cmp::Lt: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x < y; }); break;
      case Cmp::Le: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x <= y; }); break;
      case Cmp::Gt: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x > y; }); break;
      case Cmp::Ge: cpu::binary_kernel<T, bool>(loop, [](C x, C y) { return x >= y; }); break;
    }
  });
  return out;
}

enum class Logic { And, Or, Xor };

Tensor logical(Logic kind, const char* name, const Tensor& a, const Tensor& b) {
  OpGuard guard(name, a, b);
  Tensor out = make_tensor(broadcast_of(a, b, name), kBool, detail::op_device(name, a, b));
  if (!out.is_cpu()) {
    const auto op = kind == Logic::And ? dispatch::BinaryOp::LogicalAnd
                    : kind == Logic::Or ? dispatch::BinaryOp::LogicalOr : dispatch::BinaryOp::LogicalXor;
    dispatch::binary(out.device(), op, out, a, b, 1.0);
    return out;
  }
  const Tensor ac = convert(a, kBool), bc = convert(b, kBool);
  cpu::ElementwiseLoop loop = cpu_loop(out, {ac, bc});
  switch (kind) {
    case Logic::And: cpu::binary_kernel<bool>(loop, [](bool x, bool y) { return x && y; }); break;
    case Logic::Or: cpu::binary_kernel<bool>(loop, [](bool x, bool y) { return x || y; }); break;
    case Logic::Xor: cpu::binary_kernel<bool>(loop, [](bool x, bool y) { return x != y; }); break;
  }
  return out;
}

// c ? a : b on loaded values, in a form GCC vectorises (a plain ?: may become a pointer select).
template <typename T>
[[gnu::always_inline]] inline T pick(bool c, T a, T b) {
  if constexpr (std::is_arithmetic_v<T>) return detail::blend(c, a, b);
  else return c ? a : b;
}

// out = (mask == fill_when) ? value : x, with x and mask broadcast to out's shape.
template <typename T>
void masked_select_kernel(const Tensor& out, const Tensor& x, const Tensor& mask, T value, bool fill_when) {
  cpu::ElementwiseLoop loop = cpu_loop(out, {x, mask});
  loop.run([value, fill_when](char** p, const int64_t* s, int64_t n) {
    if (s[0] == int64_t(sizeof(T)) && s[1] == int64_t(sizeof(T)) && s[2] == 1) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* a = reinterpret_cast<const T*>(p[1]);
      const uint8_t* m = reinterpret_cast<const uint8_t*>(p[2]);  // bool bytes: the vectoriser can't widen bool
      const T v = value;
      const uint8_t when = fill_when;
      for (int64_t i = 0; i < n; ++i) o[i] = pick(m[i] == when, v, a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const bool m = *reinterpret_cast<const bool*>(p[2] + i * s[2]);
        const T a = *reinterpret_cast<const T*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = m == fill_when ? value : a;
      }
    }
  });
}

// out = cond ? a : b, all broadcast to out's shape, a and b in out's dtype.
template <typename T>
void where_kernel(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  cpu::ElementwiseLoop loop = cpu_loop(out, {cond, a, b});
  constexpr int64_t sz = sizeof(T);
  loop.run([](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sz && s[1] == 1 && s[2] == sz && s[3] == sz) {
      T* o = reinterpret_cast<T*>(p[0]);
      const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);  // bool bytes: the vectoriser can't widen bool
      const T* x = reinterpret_cast<const T*>(p[2]);
      const T* y = reinterpret_cast<const T*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = pick(c[i] != 0, x[i], y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        const T xv = *reinterpret_cast<const T*>(p[2] + i * s[2]), yv = *reinterpret_cast<const T*>(p[3] + i * s[3]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) = c ? xv : yv;
      }
    }
  });
}

// The gradient `grad` where mask == keep_when, zero elsewhere (where/masked_fill backward).
// A 0-dim tensor holding `value` in dtype dt on `device`.
Tensor device_scalar(const Scalar& value, ScalarType dt, Device device) {
  Tensor v = make_tensor({}, dt, device);
  if (!device.is_cpu()) dispatch::fill(v.device(), v, value);
  else fill_(v, value);
  return v;
}

Tensor grad_where(const Tensor& grad, const Tensor& mask, bool keep_when) {
  OpGuard guard("where", mask, grad);
  Tensor out = make_tensor(broadcast_of(grad, mask, "where"), grad.dtype(), detail::op_device("where", grad, mask));
  if (!out.is_cpu()) {
    const Tensor zero = device_scalar(0, grad.dtype(), out.device());
    dispatch::where(out.device(), out, mask, keep_when ? grad : zero, keep_when ? zero : grad);
    return out;
  }
  detail::visit_float(grad.dtype(),
                      [&]<typename T>() { masked_select_kernel<T>(out, grad, mask, T(0.f), !keep_when); });
  return out;
}

void check_mask(const Tensor& mask, const Tensor& self, const char* op) {
  if (mask.dtype() != kBool)
    throw DTypeError(std::string(op) + ": expected a bool mask, got " + std::string(dtype_name(mask.dtype())) +
                     " (mask shape " + format_shape(mask.sizes()) + ", self shape " + format_shape(self.sizes()) +
                     "). Hint: build the mask with a comparison (x.gt(0)) or convert it with .to(rt::kBool)");
}

void masked_fill_into(const Tensor& out, const Tensor& a, const Tensor& mask, const Scalar& value) {
  if (!detail::op_device("masked_fill", out, a, mask).is_cpu())
    return dispatch::where(out.device(), out, mask, device_scalar(value, out.dtype(), out.device()), a);
  visit_dtype(out.dtype(), [&]<typename T>() { masked_select_kernel<T>(out, a, mask, value.to<T>(), true); });
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) { return compare(Cmp::Eq, "eq", a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(Cmp::Ne, "ne", a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(Cmp::Lt, "lt", a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(Cmp::Le, "le", a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(Cmp::Gt, "gt", a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(Cmp::Ge, "ge", a, b); }

Tensor logical_and(const Tensor& a, const Tensor& b) { return logical(Logic::And, "logical_and", a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return logical(Logic::Or, "logical_or", a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return logical(Logic::Xor, "logical_xor", a, b); }

Tensor logical_not(const Tensor& a) {
  OpGuard guard("logical_not", a);
  Tensor out = make_tensor(a.sizes(), kBool, a.device());
  if (!out.is_cpu()) {
    dispatch::unary(out.device(), dispatch::UnaryOp::LogicalNot, out, a, {});
    return out;
  }
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  visit_dtype(a.dtype(), [&]<typename T>() {
    cpu::unary_kernel<T, bool>(loop, [](compute_t<T> x) { return x == compute_t<T>(0); });
  });
  return out;
}

Tensor isnan(const Tensor& a) {
  OpGuard guard("isnan", a);
  if (!is_floating(a.dtype())) return zeros(a.sizes(), TensorOptions(kBool).with_device(a.device()));
  Tensor out = make_tensor(a.sizes(), kBool, a.device());
  if (!out.is_cpu()) {
    dispatch::unary(out.device(), dispatch::UnaryOp::IsNan, out, a, {});
    return out;
  }
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  detail::visit_float(a.dtype(), [&]<typename T>() {
    cpu::unary_kernel<T, bool>(loop, [](compute_t<T> x) { return x != x; });
  });
  return out;
}

Tensor isinf(const Tensor& a) {
  OpGuard guard("isinf", a);
  if (!is_floating(a.dtype())) return zeros(a.sizes(), TensorOptions(kBool).with_device(a.device()));
  Tensor out = make_tensor(a.sizes(), kBool, a.device());
  if (!out.is_cpu()) {
    dispatch::unary(out.device(), dispatch::UnaryOp::IsInf, out, a, {});
    return out;
  }
  cpu::ElementwiseLoop loop = cpu_loop(out, {a});
  detail::visit_float(a.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    cpu::unary_kernel<T, bool>(loop, [](C x) { return std::fabs(x) == std::numeric_limits<C>::infinity(); });
  });
  return out;
}

namespace {
// The CPU kernel of dispatch::where: a and b are converted to out's dtype here, as the CUDA kernel converts on load.
void where_cpu(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  const ScalarType dt = out.dtype();
  visit_dtype(dt, [&]<typename T>() { where_kernel<T>(out, cond, convert(a, dt), convert(b, dt)); });
}
}  // namespace
RT_REGISTER_KERNEL(dispatch::where, DeviceType::CPU, where_cpu);

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  OpGuard guard("where", cond, a, b);
  if (cond.dtype() != kBool && cond.dtype() != kUInt8)
    throw DTypeError("where: expected condition to be a bool tensor, got " + std::string(dtype_name(cond.dtype())) +
                     " (condition shape " + format_shape(cond.sizes()) +
                     "). Hint: build it with a comparison, e.g. x.gt(0)");
  const ScalarType dt = result_type(a, b);
  const Shape shape = broadcast_shapes(broadcast_of(cond, a, "where"), b.sizes(), "where");
  Tensor c = convert(cond, kBool);
  Tensor out = make_tensor(shape, dt, detail::op_device("where", cond, a, b));
  dispatch::where(out.device(), out, c, a, b);
  if (autograd::any_requires_grad(a, b) && is_floating(dt)) {
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    record("WhereBackward0", {a, b}, {out}, [sc = SavedTensor(c), ga, gb](const TensorList& g) {
      Tensor m = sc.unpack();
      return TensorList{ga ? grad_where(g[0], m, true) : Tensor(), gb ? grad_where(g[0], m, false) : Tensor()};
    });
  }
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  OpGuard guard("masked_fill", a, mask);
  check_mask(mask, a, "masked_fill");
  Tensor out = make_tensor(broadcast_of(a, mask, "masked_fill"), a.dtype(), detail::op_device("masked_fill", a, mask));
  masked_fill_into(out, a, mask, value);
  if (autograd::any_requires_grad(a))
    record("MaskedFillBackward0", {a}, {out}, [sm = SavedTensor(mask)](const TensorList& g) {
      return TensorList{grad_where(g[0], sm.unpack(), false)};
    });
  return out;
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  OpGuard guard("masked_fill_", self, mask);
  check_mask(mask, self, "masked_fill_");
  detail::check_inplace_shape(self, mask, "masked_fill_");
  if (autograd::any_requires_grad(self))
    return detail::inplace_with_history(self, "masked_fill_",
                                        [&](const Tensor& s) { return masked_fill(s, mask, value); });
  masked_fill_into(self, self, mask, value);
  self.bump_version();
  return self;
}

}  // namespace rt
