// Rounding division: remainder (Python's %), fmod, floor_divide (Python's //), div with a
// rounding mode, and their in-place forms. See the contract in rt/ops/elementwise.h.
#include <atomic>
#include <cmath>
#include <string>

#include "device_copy.h"
#include "pointwise.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;
using detail::convert;

namespace {

enum class DivMod { Remainder, Fmod, FloorDivide, TruncDivide };

// What the backward of a call is, as in PyTorch 1.13's derivatives.yaml.
enum class DivModGrad {
  Remainder,       // grad, -grad * floor_divide(a, b)
  Fmod,            // grad, -grad * div(a, b, "trunc")
  Zero,            // div with a rounding mode
  NotImplemented,  // floor_divide, remainder(Scalar, Tensor): backward throws
};

dispatch::BinaryOp binary_op_of(DivMod kind) {
  switch (kind) {
    case DivMod::Remainder: return dispatch::BinaryOp::Remainder;
    case DivMod::Fmod: return dispatch::BinaryOp::Fmod;
    case DivMod::FloorDivide: return dispatch::BinaryOp::FloorDivide;
    case DivMod::TruncDivide: return dispatch::BinaryOp::TruncDivide;
  }
  return dispatch::BinaryOp::Remainder;
}

// The element functions follow the formulas of PyTorch's CPU kernels (generic_math.h, BinaryOpsKernel.cpp), so that
// results match bit for bit. Integer divisors of 0 are refused before a loop starts; the guards
// below keep a divisor changed meanwhile by another thread from trapping (SIGFPE), and b == -1
// makes INT_MIN / -1 wrap where x86's idiv traps.
template <typename C>
C remainder_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_signed_v<C>) {
      if (b == 0 || b == -1) return C(0);
      const C r = C(a % b);
      return (r != 0 && ((r < 0) != (b < 0))) ? C(r + b) : r;
    } else {
      return b == 0 ? C(0) : C(a % b);
    }
  } else {
    const C m = std::fmod(a, b);
    return (m != C(0) && ((b < C(0)) != (m < C(0)))) ? C(m + b) : m;
  }
}

template <typename C>
C fmod_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_signed_v<C>) return (b == 0 || b == -1) ? C(0) : C(a % b);
    else return b == 0 ? C(0) : C(a % b);
  } else {
    return std::fmod(a, b);
  }
}

// -a without signed overflow: INT_MIN stays INT_MIN, as two's complement wraps.
template <typename C>
C wrapping_neg(C a) {
  using U = std::make_unsigned_t<C>;
  return C(U(U(0) - U(a)));
}

// T is the storage type: for float16 and bfloat16 every intermediate is rounded to it, as
// PyTorch's vectorised CPU kernel does (its scalar kernel, which takes the last few elements
// of a row, rounds fewer; quotients beyond the type's exact integers can differ there).
template <typename T, typename C = compute_t<T>>
C floor_divide_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return wrapping_neg(a);
      const C q = C(a / b);
      return (C(a % b) != 0 && ((a < 0) != (b < 0))) ? C(q - 1) : q;
    } else {
      return C(a / b);
    }
  } else {
    auto r = [](C x) { return C(T(x)); };
    if (b == C(0)) return a / b;  // IEEE: +-inf, or nan for 0 / 0
    const C m = std::fmod(a, b);
    C d = r(r(a - m) / b);
    if (m != C(0) && ((b < C(0)) != (m < C(0)))) d = r(d - C(1));
    if (d == C(0)) return std::copysign(C(0), a / b);
    C f = std::floor(d);
    if (r(d - f) > C(0.5)) f = r(f + C(1));
    return f;
  }
}

// T as in floor_divide_of: the quotient is rounded to it before trunc.
template <typename T, typename C = compute_t<T>>
C trunc_divide_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return C(0);
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return wrapping_neg(a);
    }
    return C(a / b);
  } else {
    return std::trunc(C(T(a / b)));
  }
}

// out = a <kind> b on the CPU, a and b in out's dtype and broadcast to its shape.
void divmod_cpu(DivMod kind, const Tensor& out, const Tensor& a, const Tensor& b) {
  cpu::ElementwiseLoop loop = cpu_loop(out, {a, b});
  visit_dtype(out.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (!std::is_same_v<T, bool>) {  // refused by divmod_dtype
      switch (kind) {
        case DivMod::Remainder: cpu::binary_kernel<T>(loop, [](C x, C y) { return remainder_of(x, y); }); break;
        case DivMod::Fmod: cpu::binary_kernel<T>(loop, [](C x, C y) { return fmod_of(x, y); }); break;
        case DivMod::FloorDivide: cpu::binary_kernel<T>(loop, [](C x, C y) { return floor_divide_of<T>(x, y); }); break;
        case DivMod::TruncDivide: cpu::binary_kernel<T>(loop, [](C x, C y) { return trunc_divide_of<T>(x, y); }); break;
      }
    }
  });
}

ScalarType divmod_dtype(const char* op, const Tensor& a, const Tensor& b) {
  const ScalarType dt = result_type(a, b);
  if (dt == kBool)
    throw DTypeError(std::string(op) + ": not implemented for bool tensors (shapes " + format_shape(a.sizes()) +
                     " and " + format_shape(b.sizes()) + ")" + module_context() +
                     ". Hint: convert them to an integer dtype first, e.g. .to(rt::kInt64)");
  return dt;
}

// Whether integer tensor t holds a 0. A GPU tensor is checked by ops on its device, and this waits
// for the result.
bool has_zero(const Tensor& t) {
  if (!t.is_cpu()) return any(eq(t, scalar_to_tensor(Scalar(int64_t(0))))).item<bool>();
  std::atomic<bool> found{false};
  cpu::ElementwiseLoop loop = cpu_loop(t, {});
  visit_dtype(t.dtype(), [&]<typename T>() {
    loop.run([&found](char** p, const int64_t* s, int64_t n) {
      bool zero = false;
      for (int64_t i = 0; i < n; ++i) zero |= *reinterpret_cast<const T*>(p[0] + i * s[0]) == T(0);
      if (zero) found.store(true, std::memory_order_relaxed);
    });
  });
  return found.load();
}

// The divisor for a division in dtype dt. An integer one is converted to dt and checked for
// zeros (PyTorch's "ZeroDivisionError"), so that nothing is written when it throws; a floating
// one is returned as it is (the kernels convert it).
Tensor checked_divisor(const char* op, const Tensor& b, ScalarType dt) {
  if (is_floating(dt)) return b;
  Tensor bc = convert(b, dt);
  if (has_zero(bc))
    throw ZeroDivisionError(std::string(op) + ": integer division by zero (divisor of dtype " +
                            std::string(dtype_name(dt)) + ", shape " + format_shape(b.sizes()) + ")" +
                            module_context() +
                            ". Hint: mask the zero divisors out first, or convert to a floating dtype, where x / 0 "
                            "gives inf or nan");
  return bc;
}

// out = a <kind> b in out's dtype, any device; b already through checked_divisor.
void divmod_into(DivMod kind, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!out.is_cpu()) return dispatch::binary(out.device(), binary_op_of(kind), out, a, b, 1.0);
  const Tensor ac = convert(a, out.dtype()), bc = convert(b, out.dtype());  // the loop keeps raw pointers
  divmod_cpu(kind, out, ac, bc);
}

// A node for an op PyTorch has no derivative for: the forward keeps requires_grad, the
// backward throws as PyTorch's "NotImplemented" node does.
void record_not_implemented(const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  record("NotImplemented", {a, b}, {out}, [op](const TensorList&) -> TensorList {
    throw NotImplementedError(
        std::string("derivative for ") + op +
        " is not implemented (as in PyTorch). Hint: the result is piecewise constant in "
        "its inputs: detach() the operands, or divide with rounding_mode \"floor\", whose gradient is zero");
  });
}

void record_backward(DivModGrad grad, const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool ga = a.requires_grad(), gb = b.requires_grad();
  // PyTorch names a node after the overload: ...Backward0 for a number divisor, ...Backward1 for a tensor.
  const bool number_divisor = b.impl().wrapped_number;
  switch (grad) {
    case DivModGrad::Remainder:
    case DivModGrad::Fmod: {
      const bool rem = grad == DivModGrad::Remainder;
      const char* name = rem ? (number_divisor ? "RemainderBackward0" : "RemainderBackward1")
                             : (number_divisor ? "FmodBackward0" : "FmodBackward1");
      record(name, {a, b}, {out},
             [sa = gb ? SavedTensor(a) : SavedTensor(), sb = gb ? SavedTensor(b) : SavedTensor(), ga, gb,
              rem](const TensorList& g) {
               Tensor gb_out;
               if (gb) {
                 const Tensor x = sa.unpack(), y = sb.unpack();
                 gb_out = neg(g[0] * (rem ? floor_divide(x, y) : div(x, y, "trunc")));
               }
               return TensorList{ga ? g[0] : Tensor(), gb_out};
             });
      break;
    }
    case DivModGrad::Zero:
      record(number_divisor ? "DivBackward3" : "DivBackward2", {a, b}, {out}, [ga, gb](const TensorList& g) {
        return TensorList{ga ? zeros_like(g[0]) : Tensor(), gb ? zeros_like(g[0]) : Tensor()};
      });
      break;
    case DivModGrad::NotImplemented: record_not_implemented(op, a, b, out); break;
  }
}

Tensor divmod(DivMod kind, DivModGrad grad, const char* op, const Tensor& a, const Tensor& b) {
  OpGuard guard(op, a, b);
  const ScalarType dt = divmod_dtype(op, a, b);
  const Shape shape = a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), op);
  Tensor out = make_tensor(shape, dt, detail::op_device(op, a, b));
  divmod_into(kind, out, a, checked_divisor(op, b, dt));
  if (autograd::any_requires_grad(a, b) && is_floating(dt)) record_backward(grad, op, a, b, out);
  return out;
}

// self = self <kind> other, computed in the two operands' result type like PyTorch (a float16
// self with a float32 divisor divides in float32) and then stored in self's dtype. inplace_op
// names the call ("remainder_"), op its out-of-place form.
Tensor& divmod_(DivMod kind, DivModGrad grad, const char* inplace_op, const char* op, Tensor& self,
                const Tensor& other) {
  OpGuard guard(inplace_op, self, other);
  if (autograd::any_requires_grad(self, other))
    return detail::inplace_with_history(self, inplace_op,
                                        [&](const Tensor& s) { return divmod(kind, grad, op, s, other); });
  const ScalarType dt = divmod_dtype(inplace_op, self, other);
  detail::check_inplace_dtype(dt, self, inplace_op);
  detail::check_inplace_shape(self, other, inplace_op);
  detail::op_device(inplace_op, self, other);
  const Tensor divisor = checked_divisor(inplace_op, other, dt);
  if (dt == self.dtype()) {
    divmod_into(kind, self, self, divisor);
  } else {
    Tensor result = make_tensor(self.sizes(), dt, self.device());
    divmod_into(kind, result, self, divisor);
    detail::copy_into(self, result);
  }
  self.bump_version();
  return self;
}

// div's rounding_mode as a DivMod; nullopt for true division.
std::optional<DivMod> rounding_of(std::optional<std::string_view> mode, const char* op) {
  if (!mode) return std::nullopt;
  if (*mode == "trunc") return DivMod::TruncDivide;
  if (*mode == "floor") return DivMod::FloorDivide;
  throw ValueError(std::string(op) + ": expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
                   std::string(*mode) + "'");
}

}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b) {
  // PyTorch has no derivative for remainder(Scalar, Tensor); its Python % reaches it from 2 % t.
  const DivModGrad grad = a.impl().wrapped_number ? DivModGrad::NotImplemented : DivModGrad::Remainder;
  return divmod(DivMod::Remainder, grad, "remainder", a, b);
}
Tensor remainder(const Tensor& a, const Scalar& b) { return remainder(a, scalar_to_tensor(b)); }
Tensor remainder(const Scalar& a, const Tensor& b) { return remainder(scalar_to_tensor(a), b); }
Tensor fmod(const Tensor& a, const Tensor& b) { return divmod(DivMod::Fmod, DivModGrad::Fmod, "fmod", a, b); }
Tensor fmod(const Tensor& a, const Scalar& b) { return fmod(a, scalar_to_tensor(b)); }
Tensor floor_divide(const Tensor& a, const Tensor& b) {
  return divmod(DivMod::FloorDivide, DivModGrad::NotImplemented, "floor_divide", a, b);
}
Tensor floor_divide(const Tensor& a, const Scalar& b) { return floor_divide(a, scalar_to_tensor(b)); }

Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  const std::optional<DivMod> kind = rounding_of(rounding_mode, "div");
  if (!kind) return div(a, b);
  return divmod(*kind, DivModGrad::Zero, "div", a, b);
}

Tensor& remainder_(Tensor& self, const Tensor& other) {
  return divmod_(DivMod::Remainder, DivModGrad::Remainder, "remainder_", "remainder", self, other);
}
Tensor& remainder_(Tensor& self, const Scalar& other) { return remainder_(self, scalar_to_tensor(other)); }
Tensor& fmod_(Tensor& self, const Tensor& other) {
  return divmod_(DivMod::Fmod, DivModGrad::Fmod, "fmod_", "fmod", self, other);
}
Tensor& fmod_(Tensor& self, const Scalar& other) { return fmod_(self, scalar_to_tensor(other)); }
Tensor& floor_divide_(Tensor& self, const Tensor& other) {
  return divmod_(DivMod::FloorDivide, DivModGrad::NotImplemented, "floor_divide_", "floor_divide", self, other);
}
Tensor& floor_divide_(Tensor& self, const Scalar& other) { return floor_divide_(self, scalar_to_tensor(other)); }

Tensor& div_(Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  const std::optional<DivMod> kind = rounding_of(rounding_mode, "div_");
  if (!kind) return div_(self, other);
  return divmod_(*kind, DivModGrad::Zero, "div_", "div", self, other);
}

}  // namespace rt
