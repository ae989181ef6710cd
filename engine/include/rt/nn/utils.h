// rt/nn/utils.h — gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
//
//   loss.backward();
//   double norm = rt::nn::clip_grad_norm_(model.parameters(), 1.0);   // total 2-norm before clipping
//   rt::nn::clip_grad_value_(model.parameters(), 0.5);                // clamp every grad to [-0.5, 0.5]
//   opt.step();
//
// Contracts: parameters without a .grad are skipped. clip_grad_norm_ computes the norm of all
// gradients together (as if concatenated; norm_type may be INFINITY), then multiplies every
// gradient in place by min(1, max_norm / (total_norm + 1e-6)), exactly like PyTorch. It returns
// the total norm before clipping (0 when no parameter has a gradient). With
// error_if_nonfinite, a NaN/Inf total norm throws ValueError and leaves the gradients alone.
#pragma once
#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::nn {

double clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
void clip_grad_value_(const TensorList& parameters, double clip_value);

}  // namespace rt::nn

RT_API_END
