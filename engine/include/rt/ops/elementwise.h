// rt/ops/elementwise.h — pointwise math with broadcasting and PyTorch's type promotion.
//
//   auto y = rt::gelu(x * 2 + 1);           // float32 stays float32
//   auto m = x.gt(rt::scalar_tensor(0));    // bool tensor
//   x.add_(g, -0.1);                        // x -= 0.1 * g, in place (bumps x's version)
//   auto z = rt::where(m, x, rt::zeros_like(x));
//   auto labels = rt::arange(10) % 3;       // remainder: 0 1 2 0 1 2 ... (int64)
//
// Integer inputs to floating-only functions (exp, sqrt, sigmoid...) are promoted to float32
// like PyTorch. Half types compute in float32 and round once when stored.
// In-place ops keep the destination's dtype and shape: the other operand must broadcast to
// it and its result dtype must cast to it (float -> int throws DTypeError, as in PyTorch).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

// Result dtype of a binary op under PyTorch's rules (dims-0 and wrapped numbers rank lower).
ScalarType result_type(const Tensor& a, const Tensor& b);

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);   // true division: ints -> float32
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor square(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor gelu(const Tensor& a, const std::string& approximate = "none");  // "none" (erf) or "tanh"
Tensor silu(const Tensor& a);
Tensor softplus(const Tensor& a, double beta = 1.0, double threshold = 20.0);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Scalar& base, const Tensor& exponent);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);

// Rounding division, as PyTorch and Python's % and //. The result keeps result_type(a, b)
// (integers stay integers; bool is refused with DTypeError):
//   remainder     a - b * floor(a / b): the sign of the divisor, like Python's %    (operator%)
//   fmod          a - b * trunc(a / b): the sign of the dividend, like C's fmod
//   floor_divide  floor(a / b), like Python's //; for floats computed from fmod, as PyTorch
//                 does, so that a == b * floor_divide(a, b) + remainder(a, b) holds closely
//   div(a, b, "trunc" | "floor")  trunc(a / b) or floor_divide; nullopt: true division
// Integer division by zero throws rt::ZeroDivisionError before anything is written (on a GPU the
// check of a divisor tensor waits for the device); INT_MIN / -1 wraps to INT_MIN (remainder 0)
// where PyTorch's CPU kernel traps. Floats divided by zero give inf or nan as IEEE does.
// Gradients, as PyTorch 1.13: remainder and fmod pass grad to a and give b
// -grad * floor_divide(a, b) (remainder) or -grad * div(a, b, "trunc") (fmod); div with a rounding
// mode gives zero gradients; floor_divide and remainder(Scalar, Tensor) record a node whose
// backward throws NotImplementedError ("derivative for floor_divide is not implemented").
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor remainder(const Scalar& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, const Scalar& b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, const Scalar& b);
// rounding_mode: nullopt (true division), "trunc" or "floor"; anything else throws ValueError.
Tensor div(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// Comparisons and logical ops return bool tensors; they are not differentiable.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor isnan(const Tensor& a);
Tensor isinf(const Tensor& a);

// cond ? a : b, all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);

// In-place: self op= other. Return self.
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& mul_(Tensor& self, const Tensor& other);
Tensor& div_(Tensor& self, const Tensor& other);
Tensor& div_(Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
Tensor& remainder_(Tensor& self, const Tensor& other);
Tensor& remainder_(Tensor& self, const Scalar& other);
Tensor& fmod_(Tensor& self, const Tensor& other);
Tensor& fmod_(Tensor& self, const Scalar& other);
Tensor& floor_divide_(Tensor& self, const Tensor& other);
Tensor& floor_divide_(Tensor& self, const Scalar& other);
// Broadcasts src, converts dtype. non_blocking: a same-shaped copy from pinned memory to a GPU is
// queued on the device's current stream (see rt::to_device).
Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking = false);
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value);
Tensor& clamp_(Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor& pow_(Tensor& self, const Scalar& exponent);
// Generic in-place form of a unary op: self = fn(self). Used by neg_, exp_, relu_...
Tensor& apply_inplace(Tensor& self, const char* op, Tensor (*fn)(const Tensor&));
// a + value * b * c and a + value * b / c (optimizer updates; no autograd, in place).
Tensor& addcmul_(Tensor& self, const Tensor& b, const Tensor& c, const Scalar& value = 1);
Tensor& addcdiv_(Tensor& self, const Tensor& b, const Tensor& c, const Scalar& value = 1);
// self + weight * (end - self), in place.
Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight);

// ---- Tensor methods and operators ------------------------------------------------------
inline Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return rt::add(*this, o, alpha); }
inline Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return rt::sub(*this, o, alpha); }
inline Tensor Tensor::mul(const Tensor& o) const { return rt::mul(*this, o); }
inline Tensor Tensor::div(const Tensor& o) const { return rt::div(*this, o); }
inline Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) { return rt::add_(*this, o, alpha); }
inline Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) { return rt::sub_(*this, o, alpha); }
inline Tensor& Tensor::mul_(const Tensor& o) { return rt::mul_(*this, o); }
inline Tensor& Tensor::div_(const Tensor& o) { return rt::div_(*this, o); }
inline Tensor& Tensor::add_(const Scalar& o) { return rt::add_(*this, scalar_to_tensor(o)); }
inline Tensor& Tensor::sub_(const Scalar& o) { return rt::sub_(*this, scalar_to_tensor(o)); }
inline Tensor& Tensor::mul_(const Scalar& o) { return rt::mul_(*this, scalar_to_tensor(o)); }
inline Tensor& Tensor::div_(const Scalar& o) { return rt::div_(*this, scalar_to_tensor(o)); }
inline Tensor Tensor::remainder(const Tensor& o) const { return rt::remainder(*this, o); }
inline Tensor Tensor::remainder(const Scalar& o) const { return rt::remainder(*this, o); }
inline Tensor Tensor::fmod(const Tensor& o) const { return rt::fmod(*this, o); }
inline Tensor Tensor::fmod(const Scalar& o) const { return rt::fmod(*this, o); }
inline Tensor Tensor::floor_divide(const Tensor& o) const { return rt::floor_divide(*this, o); }
inline Tensor Tensor::floor_divide(const Scalar& o) const { return rt::floor_divide(*this, o); }
inline Tensor& Tensor::remainder_(const Tensor& o) { return rt::remainder_(*this, o); }
inline Tensor& Tensor::remainder_(const Scalar& o) { return rt::remainder_(*this, o); }
inline Tensor& Tensor::fmod_(const Tensor& o) { return rt::fmod_(*this, o); }
inline Tensor& Tensor::fmod_(const Scalar& o) { return rt::fmod_(*this, o); }
inline Tensor& Tensor::floor_divide_(const Tensor& o) { return rt::floor_divide_(*this, o); }
inline Tensor& Tensor::floor_divide_(const Scalar& o) { return rt::floor_divide_(*this, o); }
inline Tensor& Tensor::copy_(const Tensor& src) { return rt::copy_(*this, src); }
inline Tensor& Tensor::fill_(const Scalar& v) { return rt::fill_(*this, v); }
inline Tensor& Tensor::zero_() { return rt::fill_(*this, 0); }
inline Tensor Tensor::neg() const { return rt::neg(*this); }
inline Tensor Tensor::abs() const { return rt::abs(*this); }
inline Tensor Tensor::sign() const { return rt::sign(*this); }
inline Tensor Tensor::exp() const { return rt::exp(*this); }
inline Tensor Tensor::log() const { return rt::log(*this); }
inline Tensor Tensor::log1p() const { return rt::log1p(*this); }
inline Tensor Tensor::sqrt() const { return rt::sqrt(*this); }
inline Tensor Tensor::rsqrt() const { return rt::rsqrt(*this); }
inline Tensor Tensor::square() const { return rt::square(*this); }
inline Tensor Tensor::reciprocal() const { return rt::reciprocal(*this); }
inline Tensor Tensor::sin() const { return rt::sin(*this); }
inline Tensor Tensor::cos() const { return rt::cos(*this); }
inline Tensor Tensor::tanh() const { return rt::tanh(*this); }
inline Tensor Tensor::sigmoid() const { return rt::sigmoid(*this); }
inline Tensor Tensor::relu() const { return rt::relu(*this); }
inline Tensor Tensor::pow(const Tensor& e) const { return rt::pow(*this, e); }
inline Tensor Tensor::pow(const Scalar& e) const { return rt::pow(*this, e); }
inline Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const { return rt::clamp(*this, lo, hi); }
inline Tensor Tensor::clamp_min(const Scalar& lo) const { return rt::clamp(*this, lo, std::nullopt); }
inline Tensor Tensor::clamp_max(const Scalar& hi) const { return rt::clamp(*this, std::nullopt, hi); }
inline Tensor Tensor::maximum(const Tensor& o) const { return rt::maximum(*this, o); }
inline Tensor Tensor::minimum(const Tensor& o) const { return rt::minimum(*this, o); }
inline Tensor Tensor::eq(const Tensor& o) const { return rt::eq(*this, o); }
inline Tensor Tensor::ne(const Tensor& o) const { return rt::ne(*this, o); }
inline Tensor Tensor::lt(const Tensor& o) const { return rt::lt(*this, o); }
inline Tensor Tensor::le(const Tensor& o) const { return rt::le(*this, o); }
inline Tensor Tensor::gt(const Tensor& o) const { return rt::gt(*this, o); }
inline Tensor Tensor::ge(const Tensor& o) const { return rt::ge(*this, o); }
inline Tensor Tensor::logical_not() const { return rt::logical_not(*this); }
inline Tensor Tensor::logical_and(const Tensor& o) const { return rt::logical_and(*this, o); }
inline Tensor Tensor::logical_or(const Tensor& o) const { return rt::logical_or(*this, o); }
inline Tensor Tensor::logical_xor(const Tensor& o) const { return rt::logical_xor(*this, o); }
inline Tensor Tensor::masked_fill(const Tensor& m, const Scalar& v) const { return rt::masked_fill(*this, m, v); }
inline Tensor& Tensor::neg_() { return rt::apply_inplace(*this, "neg_", &rt::neg); }
inline Tensor& Tensor::abs_() { return rt::apply_inplace(*this, "abs_", &rt::abs); }
inline Tensor& Tensor::exp_() { return rt::apply_inplace(*this, "exp_", &rt::exp); }
inline Tensor& Tensor::log_() { return rt::apply_inplace(*this, "log_", &rt::log); }
inline Tensor& Tensor::sqrt_() { return rt::apply_inplace(*this, "sqrt_", &rt::sqrt); }
inline Tensor& Tensor::tanh_() { return rt::apply_inplace(*this, "tanh_", &rt::tanh); }
inline Tensor& Tensor::sigmoid_() { return rt::apply_inplace(*this, "sigmoid_", &rt::sigmoid); }
inline Tensor& Tensor::relu_() { return rt::apply_inplace(*this, "relu_", &rt::relu); }
inline Tensor& Tensor::pow_(const Scalar& e) { return rt::pow_(*this, e); }
inline Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi) { return rt::clamp_(*this, lo, hi); }
inline Tensor& Tensor::masked_fill_(const Tensor& m, const Scalar& v) { return rt::masked_fill_(*this, m, v); }

inline Tensor operator+(const Tensor& a, const Tensor& b) { return rt::add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return rt::sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return rt::mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return rt::div(a, b); }
inline Tensor operator%(const Tensor& a, const Tensor& b) { return rt::remainder(a, b); }
inline Tensor operator-(const Tensor& a) { return rt::neg(a); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return rt::add(a, scalar_to_tensor(b)); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return rt::sub(a, scalar_to_tensor(b)); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return rt::mul(a, scalar_to_tensor(b)); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return rt::div(a, scalar_to_tensor(b)); }
inline Tensor operator%(const Tensor& a, const Scalar& b) { return rt::remainder(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return rt::add(scalar_to_tensor(a), b); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return rt::sub(scalar_to_tensor(a), b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return rt::mul(scalar_to_tensor(a), b); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return rt::div(scalar_to_tensor(a), b); }
inline Tensor operator%(const Scalar& a, const Tensor& b) { return rt::remainder(a, b); }

}  // namespace rt

RT_API_END
