// rt/amp/grad_scaling.h — the device-side steps of loss scaling (torch's GradScaler kernels).
//
// float16 gradients of small magnitude underflow to zero; scaling the loss by S scales every
// gradient by S too. Before the optimizer step the gradients are divided by S again and
// checked: a step whose gradients hold an inf or a NaN is skipped and S shrinks; after enough
// clean steps S grows. rustytorch.amp.GradScaler (Python) is built on these two functions:
//
//   Tensor scale = rt::full({}, 65536.0, rt::TensorOptions(rt::kFloat32).with_device(dev));
//   Tensor tracker = rt::zeros({}, rt::TensorOptions(rt::kInt32).with_device(dev));
//   Tensor found_inf = rt::zeros({}, rt::TensorOptions(rt::kFloat32).with_device(dev));
//   (loss * scale).backward();
//   rt::amp::non_finite_check_and_unscale_(grads, found_inf, rt::reciprocal(scale));
//   if (found_inf.item<float>() == 0) opt.step();                 // the one host sync
//   rt::amp::update_scale_(scale, tracker, found_inf, 2.0, 0.5, 2000);
//
// Both run as ordinary ops (no gradient recorded, no autocast) on the tensors' device and
// never synchronize with the host.
#pragma once
#include <cstdint>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::amp {

// Multiplies every defined grad by inv_scale in place and sets found_inf to 1 when any of
// them holds an inf or a NaN (it is never cleared here: one flag can collect several calls).
// found_inf and inv_scale: one-element float32 tensors on the grads' device (ValueError,
// DTypeError, DeviceError otherwise).
void non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf, const Tensor& inv_scale);

// After a step with found_inf set: scale *= backoff_factor and growth_tracker restarts at 0.
// Otherwise growth_tracker += 1, and when it reaches growth_interval: scale *= growth_factor
// (kept as it was if that would be inf) and growth_tracker restarts.
// scale: one-element float32; growth_tracker: one-element int32; found_inf: as above; one device.
void update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf, double growth_factor,
                   double backoff_factor, int64_t growth_interval);

}  // namespace rt::amp

RT_API_END
