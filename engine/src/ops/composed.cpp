// The composed GPU paths (composed.h): each one a few ops with kernels on every device.
#include "composed.h"

#include <cmath>

#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/view.h"

namespace rt::detail::composed {

namespace {

Tensor number(double v) { return scalar_to_tensor(v); }

// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
Tensor log_sigmoid(const Tensor& x) { return minimum(x, zeros({}, x.dtype())) - log1p(exp(-abs(x))); }

// 1 + (pw - 1) * t: the weight of the positive term of binary cross-entropy.
Tensor positive_weight(const Tensor& t, const Tensor& pw) { return (pw - Scalar(1.0)) * t + Scalar(1.0); }

}  // namespace

Tensor var_std_backward(const Tensor& x, const Tensor& g, const Tensor& result, const Shape& dims, int64_t n,
                        int64_t correction, bool take_sqrt) {
  const double dof = double(n - correction);
  const Tensor centered = x - mean(x, dims, /*keepdim=*/true);
  if (!take_sqrt) return centered * (g * Scalar(2.0 / dof));
  // d std / dx = (x - mean) / (dof * std); a zero std passes no gradient, as on the CPU.
  const Tensor scale = masked_fill(g / (result * Scalar(dof)), eq(result, number(0.0)), 0.0);
  return centered * scale;
}

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  NoGradGuard no_grad;
  const Tensor a = abs(x);
  if (std::isinf(p)) return p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
  if (p == 0) return sum(ne(x, number(0.0)).to(x.dtype()), dims, keepdim);
  if (p == 1) return sum(a, dims, keepdim);
  if (p == 2) return sqrt(sum(x * x, dims, keepdim));
  return pow(sum(pow(a, Scalar(p)), dims, keepdim), Scalar(1.0 / p));
}

Tensor norm_backward(const Tensor& x, const Tensor& g, const Tensor& result, double p, const Shape& dims) {
  const Tensor zero_norm = eq(result, number(0.0));
  if (p == 0) return zeros_like(x);
  if (p == 1) return sign(x) * g;
  if (p == 2) return masked_fill(g / result, zero_norm, 0.0) * x;
  const Tensor a = abs(x);
  if (std::isinf(p)) {  // the elements at the extreme (or NaN) share the gradient evenly
    const Tensor at_extreme = logical_or(eq(a, result), isnan(a));
    const Tensor ties = sum(at_extreme, dims, /*keepdim=*/true).to(x.dtype());
    return where(at_extreme, sign(x) * (g / ties), zeros({}, x.dtype()));
  }
  if (p < 1)
    return masked_fill(sign(x) * pow(a, Scalar(p - 1)) * g * pow(result, Scalar(1 - p)), eq(x, number(0.0)), 0.0);
  const Tensor scale = masked_fill(g / pow(result, Scalar(p - 1)), zero_norm, 0.0);
  return (p < 2 ? sign(x) * pow(a, Scalar(p - 1)) : x * pow(a, Scalar(p - 2))) * scale;
}

Tensor prod_backward(const Tensor& x, const Tensor& g, const Tensor& result, std::optional<int64_t> dim) {
  const Shape dims = dim ? Shape{*dim} : Shape{};
  const Tensor is_zero = eq(x, number(0.0));
  const Tensor zeros_in_row = sum(is_zero, dims, /*keepdim=*/true);
  // No zero in the row: g * prod / x_i. Positions of non-zeros in a row with zeros get 0.
  const Tensor plain = masked_fill(g * result / x, ne(zeros_in_row, number(0.0)), 0.0);
  // The one zero of a row gets the product of the others; rows with two or more zeros give 0.
  const Tensor others = dim ? prod(masked_fill(x, is_zero, 1.0), *dim, /*keepdim=*/true) : prod(masked_fill(x, is_zero, 1.0));
  const Tensor at_zero = masked_fill(g * others, ne(zeros_in_row, number(1.0)), 0.0);
  return where(is_zero, at_zero, plain);
}

Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim) {
  NoGradGuard no_grad;
  const Tensor m = amax(x, dims, /*keepdim=*/true);
  const Tensor shift = masked_fill(m, isinf(m), 0.0);
  const Tensor s = sum(exp(x - shift), dims, keepdim);
  return log(s) + (keepdim ? shift : reshape(shift, s.sizes()));
}

Tensor logsumexp_backward(const Tensor& x, const Tensor& g, const Tensor& result) { return g * exp(x - result); }

Tensor mse_elementwise(const Tensor& x, const Tensor& t) {
  NoGradGuard no_grad;
  return square(x - t);
}

Tensor mse_backward(const Tensor& x, const Tensor& t, const Tensor& gs) { return (x - t) * (gs * Scalar(2.0)); }

Tensor bce_with_logits_elementwise(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw) {
  NoGradGuard no_grad;
  return w * ((Scalar(1.0) - t) * x - positive_weight(t, pw) * log_sigmoid(x));
}

TensorList bce_with_logits_backward(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw,
                                    const Tensor& gs, const bool need[4]) {
  const Tensor wg = w * gs;
  const Tensor ls = need[1] || need[2] || need[3] ? log_sigmoid(x) : Tensor();
  TensorList r(4);
  if (need[0]) r[0] = wg * ((Scalar(1.0) - t) - positive_weight(t, pw) * sigmoid(-x));
  if (need[1]) r[1] = wg * (-x - (pw - Scalar(1.0)) * ls);
  if (need[2]) r[2] = gs * ((Scalar(1.0) - t) * x - positive_weight(t, pw) * ls);
  if (need[3]) r[3] = -(wg * t * ls);
  return r;
}

Tensor reduce_loss(const Tensor& el, bool mean_of, bool sum_of) {
  NoGradGuard no_grad;
  if (mean_of) return mean(el);
  if (sum_of) return sum(el);
  return el;
}

Tensor extremum_backward(bool is_max, const Tensor& g, const Tensor& x, const Tensor& y) {
  const Tensor loses = is_max ? lt(x, y) : gt(x, y);
  return masked_fill(where(eq(x, y), g * Scalar(0.5), g), loses, 0.0);
}

Tensor pow_base_backward(const Tensor& g, const Tensor& x, const Tensor& y, ScalarType dt) {
  const Tensor xd = x.to(dt), yd = y.to(dt);
  return masked_fill(g * yd * pow(xd, yd - Scalar(1.0)), eq(yd, number(0.0)), 0.0);
}

Tensor pow_exponent_backward(const Tensor& g, const Tensor& x, const Tensor& y, ScalarType dt) {
  const Tensor xd = x.to(dt), yd = y.to(dt);
  const Tensor zero_base = logical_and(eq(xd, number(0.0)), ge(yd, number(0.0)));
  return masked_fill(g * pow(xd, yd) * log(xd), zero_base, 0.0);
}

}  // namespace rt::detail::composed
