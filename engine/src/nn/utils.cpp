#include "rt/nn/utils.h"

#include <algorithm>
#include <cmath>

#include "rt/autograd/grad_mode.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"

namespace rt::nn {

double clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
  if (!(norm_type > 0))
    throw ValueError("clip_grad_norm_: norm_type must be positive (or INFINITY), got " + std::to_string(norm_type));
  NoGradGuard ng;
  TensorList grads;
  for (const auto& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;

  double total = 0.0;
  if (std::isinf(norm_type)) {
    for (const auto& g : grads)
      if (g.numel() > 0) total = std::max(total, rt::amax(rt::abs(g)).item<double>());
  } else {
    for (const auto& g : grads) total += std::pow(rt::norm(g, norm_type).item<double>(), norm_type);
    total = std::pow(total, 1.0 / norm_type);
  }
  if (error_if_nonfinite && !std::isfinite(total))
    throw ValueError("clip_grad_norm_: the total norm of order " + std::to_string(norm_type) +
                     " for gradients from `parameters` is non-finite, so it cannot be clipped. Hint: pass "
                     "error_if_nonfinite=false to clip anyway, or check the loss for NaN/Inf.");
  const double coef = std::min(1.0, max_norm / (total + 1e-6));
  for (auto& g : grads) g.mul_(coef);
  return total;
}

void clip_grad_value_(const TensorList& parameters, double clip_value) {
  NoGradGuard ng;
  for (const auto& p : parameters) {
    Tensor g = p.defined() ? p.grad() : Tensor();
    if (g.defined()) g.clamp_(-clip_value, clip_value);
  }
}

}  // namespace rt::nn
