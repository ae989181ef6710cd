// add, sub, mul, div, neg and their in-place forms; copy_, fill_; optimizer helpers.
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include "dispatch_stubs.h"
#include "device_copy.h"
#include "op_device.h"
#include "ops/cpu_view.h"
#include "ops/isa_loops.h"
#include "inplace.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;

namespace {

// PyTorch's combine_categories: a lower-priority operand only matters when its category
// (bool < integer < floating) is higher.
std::optional<ScalarType> combine(std::optional<ScalarType> higher, std::optional<ScalarType> lower) {
  if (!higher) return lower;
  if (is_floating(*higher)) return higher;
  if (*higher == kBool || (lower && is_floating(*lower))) return lower ? promote_types(*higher, *lower) : *higher;
  return higher;
}

void update(std::optional<ScalarType>& slot, ScalarType t) { slot = slot ? promote_types(*slot, t) : t; }

// In cpu::VecBinary's order (isa_arith converts one to the other).
enum class Arith { Add, Sub, Mul, Div };

template <typename T>
void flat_kernel(Arith kind, const T* a, const T* b, T* o, int64_t n, double alpha) {
  using C = compute_t<T>;
  const C al = C(alpha);
  auto body = [&](int64_t lo, int64_t hi) {
    switch (kind) {
      case Arith::Add:
        if (alpha == 1.0) for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) + C(b[i]));
        else for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) + al * C(b[i]));
        break;
      case Arith::Sub:
        if (alpha == 1.0) for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) - C(b[i]));
        else for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) - al * C(b[i]));
        break;
      case Arith::Mul: for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) * C(b[i])); break;
      case Arith::Div: for (int64_t i = lo; i < hi; ++i) o[i] = T(C(a[i]) / C(b[i])); break;
    }
  };
  if (n < cpu::kParallelGrain) {
    body(0, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(cpu::num_threads(), n / cpu::kParallelGrain + 1);
#pragma omp parallel for num_threads(int(chunks))
  for (int64_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

// The device kernels' name for an arithmetic op.
dispatch::BinaryOp binary_op_of(Arith kind) {
  switch (kind) {
    case Arith::Add: return dispatch::BinaryOp::Add;
    case Arith::Sub: return dispatch::BinaryOp::Sub;
    case Arith::Mul: return dispatch::BinaryOp::Mul;
    case Arith::Div: return dispatch::BinaryOp::Div;
  }
  return dispatch::BinaryOp::Add;
}

// float32/float64 out = a <kind> b through the per-level kernel (kernels/cpu/isa_kernels.h) when
// each operand is contiguous like out or a single element; false otherwise. Same bits as flat_kernel.
bool isa_arith(Arith kind, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  const ScalarType dt = out.dtype();
  if ((dt != kFloat32 && dt != kFloat64) || !out.is_contiguous()) return false;
  auto operand = [&](const Tensor& t, int64_t& step) -> Tensor {
    if (t.sizes() == out.sizes() && t.dtype() == dt && t.is_contiguous()) {
      step = 1;
      return t;
    }
    step = 0;
    return t.numel() == 1 ? detail::convert(t, dt) : Tensor();
  };
  int64_t as = 0, bs = 0;
  const Tensor ac = operand(a, as), bc = operand(b, bs);
  if (!ac.defined() || !bc.defined()) return false;
  const cpu::IsaKernels& k = cpu::isa_kernels();
  const auto op = cpu::VecBinary(int(kind));
  if (dt == kFloat32) {
    float* o = static_cast<float*>(out.raw_data());
    const float *x = static_cast<const float*>(ac.raw_data()), *y = static_cast<const float*>(bc.raw_data());
    detail::parallel_ranges(out.numel(), [&](int64_t lo, int64_t hi) {
      k.binary_f32(op, o + lo, x + lo * as, as, y + lo * bs, bs, hi - lo, float(alpha));
    });
  } else {
    double* o = static_cast<double*>(out.raw_data());
    const double *x = static_cast<const double*>(ac.raw_data()), *y = static_cast<const double*>(bc.raw_data());
    detail::parallel_ranges(out.numel(), [&](int64_t lo, int64_t hi) {
      k.binary_f64(op, o + lo, x + lo * as, as, y + lo * bs, bs, hi - lo, alpha);
    });
  }
  return true;
}

// Writes a <kind> b into out (already shaped to the broadcast), all in dtype out.dtype().
void arith_into(Arith kind, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  if (!out.is_cpu()) return dispatch::binary(out.device(), binary_op_of(kind), out, a, b, alpha);
  if (isa_arith(kind, out, a, b, alpha)) return;
  const ScalarType dt = out.dtype();
  if (a.dtype() == dt && b.dtype() == dt && a.sizes() == out.sizes() && b.sizes() == out.sizes() &&
      a.is_contiguous() && b.is_contiguous() && out.is_contiguous()) {
    visit_dtype(dt, [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool>) {
        cpu::ElementwiseLoop loop = cpu_loop(out, {a, b});
        cpu::binary_kernel<bool>(loop, [kind](bool x, bool y) { return kind == Arith::Mul ? (x && y) : (x || y); });
      } else {
        flat_kernel<T>(kind, static_cast<const T*>(a.raw_data()), static_cast<const T*>(b.raw_data()),
                       static_cast<T*>(out.raw_data()), out.numel(), alpha);
      }
    });
    return;
  }
  Tensor ac = detail::convert(a, dt), bc = detail::convert(b, dt);
  cpu::ElementwiseLoop loop = cpu_loop(out, {ac, bc});
  visit_dtype(dt, [&]<typename T>() {
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      cpu::binary_kernel<bool>(loop, [kind](bool x, bool y) { return kind == Arith::Mul ? (x && y) : (x || y); });
    } else {
      const C al = C(alpha);
      switch (kind) {
        case Arith::Add: cpu::binary_kernel<T>(loop, [al](C x, C y) { return x + al * y; }); break;
        case Arith::Sub: cpu::binary_kernel<T>(loop, [al](C x, C y) { return x - al * y; }); break;
        case Arith::Mul: cpu::binary_kernel<T>(loop, [](C x, C y) { return x * y; }); break;
        case Arith::Div: cpu::binary_kernel<T>(loop, [](C x, C y) { return x / y; }); break;
      }
    }
  });
}

const char* arith_name(Arith k) {
  switch (k) {
    case Arith::Add: return "add";
    case Arith::Sub: return "sub";
    case Arith::Mul: return "mul";
    case Arith::Div: return "div";
  }
  return "";
}

ScalarType arith_dtype(Arith kind, const Tensor& a, const Tensor& b) {
  ScalarType dt = result_type(a, b);
  if (kind == Arith::Div && !is_floating(dt)) dt = kFloat32;
  if (kind == Arith::Sub && dt == kBool)
    throw DTypeError("sub: subtraction with two bool tensors is not supported; use logical_xor() instead");
  return dt;
}

Tensor arith(Arith kind, const Tensor& a, const Tensor& b, double alpha) {
  const char* name = arith_name(kind);
  OpGuard guard(name, a, b);
  const ScalarType dt = arith_dtype(kind, a, b);
  const Shape shape = a.sizes() == b.sizes() ? a.sizes() : broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = make_tensor(shape, dt, detail::op_device(name, a, b));
  arith_into(kind, out, a, b, alpha);
  if (autograd::any_requires_grad(a, b)) {
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    switch (kind) {
      case Arith::Add:
        record("AddBackward0", {a, b}, {out}, [alpha](const TensorList& g) {
          return TensorList{g[0], alpha == 1.0 ? g[0] : g[0] * alpha};
        });
        break;
      case Arith::Sub:
        record("SubBackward0", {a, b}, {out}, [alpha](const TensorList& g) {
          return TensorList{g[0], alpha == 1.0 ? neg(g[0]) : g[0] * (-alpha)};
        });
        break;
      case Arith::Mul:
        record("MulBackward0", {a, b}, {out},
               [sa = gb ? SavedTensor(a) : SavedTensor(), sb = ga ? SavedTensor(b) : SavedTensor(), ga, gb](const TensorList& g) {
                 return TensorList{ga ? g[0] * sb.unpack() : Tensor(), gb ? g[0] * sa.unpack() : Tensor()};
               });
        break;
      case Arith::Div:
        record("DivBackward0", {a, b}, {out},
               [sa = gb ? SavedTensor(a) : SavedTensor(), sb = SavedTensor(b), ga, gb](const TensorList& g) {
                 Tensor bv = sb.unpack();
                 return TensorList{ga ? g[0] / bv : Tensor(), gb ? neg(g[0] * sa.unpack() / (bv * bv)) : Tensor()};
               });
        break;
    }
  }
  return out;
}

Tensor& arith_(Arith kind, Tensor& self, const Tensor& other, double alpha, const char* name) {
  OpGuard guard(name, self, other);
  const bool needs_grad = autograd::any_requires_grad(self, other);
  if (needs_grad)
    return detail::inplace_with_history(self, name, [&](const Tensor& s) { return arith(kind, s, other, alpha); });
  detail::check_inplace_dtype(arith_dtype(kind, self, other), self, name);
  detail::check_inplace_shape(self, other, name);
  detail::op_device(name, self, other);
  arith_into(kind, self, self, other, alpha);
  self.bump_version();
  return self;
}

}  // namespace

ScalarType result_type(const Tensor& a, const Tensor& b) {
  std::optional<ScalarType> dim_result, zero_result, wrapped_result;
  for (const Tensor* t : {&a, &b}) {
    if (t->impl().wrapped_number) {
      ScalarType s = t->dtype();
      if (is_floating(s)) s = kFloat32;  // the default dtype
      update(wrapped_result, s);
    } else if (t->dim() == 0) {
      update(zero_result, t->dtype());
    } else {
      update(dim_result, t->dtype());
    }
  }
  return *combine(dim_result, combine(zero_result, wrapped_result));
}

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return arith(Arith::Add, a, b, alpha.to_double()); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return arith(Arith::Sub, a, b, alpha.to_double()); }
Tensor mul(const Tensor& a, const Tensor& b) { return arith(Arith::Mul, a, b, 1.0); }
Tensor div(const Tensor& a, const Tensor& b) { return arith(Arith::Div, a, b, 1.0); }

Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) { return arith_(Arith::Add, self, other, alpha.to_double(), "add_"); }
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha) { return arith_(Arith::Sub, self, other, alpha.to_double(), "sub_"); }
Tensor& mul_(Tensor& self, const Tensor& other) { return arith_(Arith::Mul, self, other, 1.0, "mul_"); }
Tensor& div_(Tensor& self, const Tensor& other) { return arith_(Arith::Div, self, other, 1.0, "div_"); }

Tensor neg(const Tensor& a) {
  OpGuard guard("neg", a);
  if (a.dtype() == kBool) throw DTypeError("neg: negation of a bool tensor is not supported; use logical_not() instead");
  Tensor out = make_tensor(a.sizes(), a.dtype(), a.device());
  if (!out.is_cpu()) {
    dispatch::unary(out.device(), dispatch::UnaryOp::Neg, out, a, {});
  } else {
    cpu::ElementwiseLoop loop = cpu_loop(out, {a});
    visit_dtype(a.dtype(), [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) cpu::unary_kernel<T>(loop, [](compute_t<T> x) { return -x; });
    });
  }
  if (autograd::any_requires_grad(a))
    record("NegBackward0", {a}, {out}, [](const TensorList& g) { return TensorList{neg(g[0])}; });
  return out;
}

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  OpGuard guard("copy_", self, src);
  detail::check_inplace_shape(self, src, "copy_");
  const bool needs_grad = autograd::any_requires_grad(self, src);
  detail::check_inplace(self, "copy_", needs_grad);
  if (non_blocking && self.device() != src.device() && self.sizes() == src.sizes()) {
    cuda::detail::copy(self, src, /*non_blocking=*/true);
  } else if (!self.storage().is_same(src.storage()) || self.is_same(src)) {
    detail::copy_into(self, src);
  } else {
    detail::copy_into(self, rt::clone(detach(src)));  // overlapping memory: go through a copy
  }
  self.bump_version();
  if (needs_grad && is_floating(self.dtype()))
    record("CopyBackwards", {src}, {self}, [](const TensorList& g) { return TensorList{g[0]}; });
  return self;
}

namespace {
// The CPU kernel of dispatch::fill.
void fill_cpu(const Tensor& self, const Scalar& value) {
  visit_dtype(self.dtype(), [&]<typename T>() {
    const T v = value.to<T>();
    if (self.is_contiguous()) {  // zeros (gradient buffers, view backwards): one memset
      T* p = static_cast<T*>(self.raw_data());
      const T zero{};
      if (std::memcmp(&v, &zero, sizeof(T)) == 0)
        std::memset(static_cast<void*>(p), 0, size_t(self.numel()) * sizeof(T));
      else
        std::fill_n(p, self.numel(), v);
      return;
    }
    cpu::ElementwiseLoop loop = cpu_loop(self, std::vector<Tensor>{});
    loop.run([v](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
}
}  // namespace
RT_REGISTER_KERNEL(dispatch::fill, DeviceType::CPU, fill_cpu);

Tensor& fill_(Tensor& self, const Scalar& value) {
  OpGuard guard("fill_", self);
  const bool needs_grad = autograd::any_requires_grad(self);
  detail::check_inplace(self, "fill_", needs_grad);
  dispatch::fill(self.device(), self, value);
  self.bump_version();
  if (needs_grad) record("FillBackward0", {}, {self}, [](const TensorList&) { return TensorList{}; });
  return self;
}

Tensor& apply_inplace(Tensor& self, const char* op, Tensor (*fn)(const Tensor&)) {
  OpGuard guard(op, self);
  if (autograd::any_requires_grad(self)) return detail::inplace_with_history(self, op, fn);
  detail::check_no_internal_overlap(self, op);
  Tensor r = fn(self);
  detail::check_inplace_dtype(r.dtype(), self, op);
  detail::copy_into(self, r);
  self.bump_version();
  return self;
}

namespace {
// self = f(self, b, c) elementwise in self's dtype; optimizer updates, never recorded.
// on_device: the kernel for a tensor on a GPU (kernels/cuda/ternary.h).
template <typename F>
Tensor& ternary_update(Tensor& self, const Tensor& b, const Tensor& c, const char* op, F f,
                       const std::function<void()>& on_device) {
  OpGuard guard(op, self, b, c);
  if (autograd::any_requires_grad(self, b, c))
    throw NotImplementedError(std::string(op) + " does not record autograd history; call it under rt::NoGradGuard");
  detail::check_inplace_shape(self, b, op);
  detail::check_inplace_shape(self, c, op);
  if (!detail::op_device(op, self, b, c).is_cpu()) {
    if (!is_floating(self.dtype()))
      throw DTypeError(std::string(op) + ": expected a floating point tensor, got " + std::string(dtype_name(self.dtype())));
    on_device();
    self.bump_version();
    return self;
  }
  Tensor bc = detail::convert(b, self.dtype()), cc = detail::convert(c, self.dtype());
  cpu::ElementwiseLoop loop = cpu_loop(self, {self, bc, cc});
  visit_dtype(self.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>)
      cpu::ternary_kernel<T, T, T, T>(loop, [&f](compute_t<T> x, compute_t<T> y, compute_t<T> z) { return f(x, y, z); });
    else
      throw DTypeError(std::string(op) + ": expected a floating point tensor, got " + std::string(dtype_name(dtype_of_v<T>)));
  });
  self.bump_version();
  return self;
}
}  // namespace

Tensor& addcmul_(Tensor& self, const Tensor& b, const Tensor& c, const Scalar& value) {
  const double v = value.to_double();
  return ternary_update(
      self, b, c, "addcmul_", [v](auto x, auto y, auto z) { return x + decltype(x)(v) * y * z; },
      [&] { dispatch::ternary(self.device(), dispatch::TernaryOp::AddCMul, self, self, b, c, v); });
}

Tensor& addcdiv_(Tensor& self, const Tensor& b, const Tensor& c, const Scalar& value) {
  const double v = value.to_double();
  return ternary_update(
      self, b, c, "addcdiv_", [v](auto x, auto y, auto z) { return x + decltype(x)(v) * y / z; },
      [&] { dispatch::ternary(self.device(), dispatch::TernaryOp::AddCDiv, self, self, b, c, v); });
}

Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight) {
  const double w = weight.to_double();
  return ternary_update(
      self, end, end, "lerp_", [w](auto x, auto y, auto) { return x + decltype(x)(w) * (y - x); },
      [&] { dispatch::binary(self.device(), dispatch::BinaryOp::Lerp, self, self, end, w); });
}

}  // namespace rt
