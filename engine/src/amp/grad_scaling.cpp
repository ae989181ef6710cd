// Loss-scaling steps built from the engine's ops, so they run unchanged on every device and
// no value crosses to the host. torch fuses each into one multi-tensor kernel; here the check
// costs four small ops per gradient and the flag one update per call.
#include "rt/amp/grad_scaling.h"

#include <string>

#include "rt/amp/autocast.h"
#include "rt/autograd/grad_mode.h"
#include "rt/error.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/reduce.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt::amp {
namespace {

void check_flag(const char* op, const char* name, const Tensor& t, ScalarType dtype) {
  if (!t.defined() || t.numel() != 1)
    throw ValueError(std::string(op) + ": " + name + " must be a one-element tensor, got " +
                     (t.defined() ? "shape " + format_shape(t.sizes()) : std::string("an undefined tensor")));
  if (t.dtype() != dtype)
    throw DTypeError(std::string(op) + ": " + name + " must be " + std::string(dtype_name(dtype)) + ", got " +
                     std::string(dtype_name(t.dtype())));
}

void check_same_device(const char* op, const char* name, const Tensor& t, const Tensor& like) {
  if (t.device() != like.device())
    throw DeviceError(std::string(op) + ": " + name + " is on " + t.device().str() + " but " + like.device().str() +
                      " was expected; move it with .to(" + like.device().str() + ")");
}

}  // namespace

void non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale) {
  constexpr const char* kOp = "_amp_foreach_non_finite_check_and_unscale_";
  OpGuard guard(kOp, grads);
  check_flag(kOp, "found_inf", found_inf, kFloat32);
  check_flag(kOp, "inv_scale", inv_scale, kFloat32);
  check_same_device(kOp, "inv_scale", inv_scale, found_inf);
  NoGradGuard no_grad;
  AutocastExcludedGuard no_autocast;
  TensorList bad;
  bad.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    Tensor g = grads[i];  // a handle: the in-place ops below update the caller's gradient
    if (!g.defined()) continue;
    if (!is_floating(g.dtype()))
      throw DTypeError(std::string(kOp) + ": gradient " + std::to_string(i) + " is " + std::string(dtype_name(g.dtype())) +
                       "; only floating gradients can be unscaled");
    check_same_device(kOp, ("gradient " + std::to_string(i)).c_str(), g, found_inf);
    g.mul_(inv_scale.reshape({}));
    if (g.numel() > 0) bad.push_back(any(logical_or(isnan(g), isinf(g))));
  }
  if (bad.empty()) return;
  const Tensor any_bad = any(stack(bad)).to(kFloat32).reshape(found_inf.sizes());
  Tensor flag = found_inf;
  flag.copy_(maximum(found_inf, any_bad));
}

void update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                   double backoff_factor, int64_t growth_interval) {
  constexpr const char* kOp = "_amp_update_scale_";
  OpGuard guard(kOp, scale, growth_tracker, found_inf);
  check_flag(kOp, "scale", scale, kFloat32);
  check_flag(kOp, "growth_tracker", growth_tracker, kInt32);
  check_flag(kOp, "found_inf", found_inf, kFloat32);
  check_same_device(kOp, "growth_tracker", growth_tracker, scale);
  check_same_device(kOp, "found_inf", found_inf, scale);
  if (!(growth_factor > 1.0)) throw ValueError(std::string(kOp) + ": growth_factor must be > 1, got " + std::to_string(growth_factor));
  if (!(backoff_factor > 0.0 && backoff_factor < 1.0))
    throw ValueError(std::string(kOp) + ": backoff_factor must be in (0, 1), got " + std::to_string(backoff_factor));
  if (growth_interval <= 0)
    throw ValueError(std::string(kOp) + ": growth_interval must be a positive int, got " + std::to_string(growth_interval));
  NoGradGuard no_grad;
  AutocastExcludedGuard no_autocast;
  const Tensor found = gt(found_inf, scalar_to_tensor(Scalar(0.0)));
  const Tensor counted = where(found, zeros_like(growth_tracker), growth_tracker + Scalar(1));
  const Tensor interval_done = ge(counted, scalar_to_tensor(Scalar(growth_interval)));
  const Tensor grown = scale * Scalar(growth_factor);
  const Tensor grow = logical_and(interval_done, logical_not(isinf(grown)));
  const Tensor next_scale = where(found, scale * Scalar(backoff_factor), where(grow, grown, scale));
  const Tensor next_tracker = where(interval_done, zeros_like(growth_tracker), counted);
  Tensor scale_out = scale, tracker_out = growth_tracker;
  scale_out.copy_(next_scale);
  tracker_out.copy_(next_tracker);
}

}  // namespace rt::amp
