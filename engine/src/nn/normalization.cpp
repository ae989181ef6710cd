#include "rt/nn/normalization.h"

#include "repr.h"
#include "rt/allocator.h"
#include "rt/autograd/grad_mode.h"
#include "rt/nn/init.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/nn_functional.h"

namespace rt::nn {

BatchNorm2d::BatchNorm2d(int64_t n, const BatchNormOptions& o) : Module("BatchNorm2d"), num_features(n), options(o) {
  if (n <= 0) throw ValueError("BatchNorm2d: num_features must be positive, got " + std::to_string(n));
  if (o.momentum && (*o.momentum < 0.0 || *o.momentum > 1.0))
    throw ValueError("BatchNorm2d: momentum must lie in [0, 1], got " + detail::py_float(*o.momentum));
  if (o.affine) {
    weight = register_parameter("weight", empty_parameter({n}));
    bias = register_parameter("bias", empty_parameter({n}));
  }
  if (o.track_running_stats) {
    MemoryCategoryGuard g(MemoryCategory::Parameter);
    running_mean = register_buffer("running_mean", rt::zeros({n}));
    running_var = register_buffer("running_var", rt::ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", rt::zeros({}, kInt64));
  }
  reset_parameters();
}

void BatchNorm2d::reset_running_stats() {
  if (!options.track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNorm2d::reset_parameters() {
  reset_running_stats();
  if (options.affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  if (x.dim() != 4)
    throw_shape_error("BatchNorm2d", "expected 4D input (got " + std::to_string(x.dim()) + "D input of shape " +
                                         format_shape(x.sizes()) + ")",
                      "BatchNorm2d normalises [N, C, H, W]; use unsqueeze(0) for a single image");
  if (x.size(1) != num_features)
    throw_shape_error("BatchNorm2d", "expected " + std::to_string(num_features) + " channels in dimension 1, got shape " +
                                         format_shape(x.sizes()),
                      "num_features must equal the channel count of the layer before");
  double factor = options.momentum.value_or(0.0);
  if (is_training() && options.track_running_stats) {
    NoGradGuard ng;
    num_batches_tracked.add_(1);
    if (!options.momentum) factor = 1.0 / double(num_batches_tracked.item<int64_t>());
  }
  const bool use_batch_stats = is_training() || !options.track_running_stats;
  return rt::batch_norm(x, running_mean, running_var, weight, bias, use_batch_stats, factor, options.eps);
}

std::string BatchNorm2d::extra_repr() const {
  return std::to_string(num_features) + ", eps=" + detail::py_float(options.eps) +
         ", momentum=" + (options.momentum ? detail::py_float(*options.momentum) : std::string("None")) +
         ", affine=" + detail::py_bool(options.affine) +
         ", track_running_stats=" + detail::py_bool(options.track_running_stats);
}

LayerNorm::LayerNorm(const Shape& shape, const LayerNormOptions& o)
    : Module("LayerNorm"), normalized_shape(shape), options(o) {
  if (shape.empty()) throw ValueError("LayerNorm: normalized_shape must have at least one dim");
  for (int64_t d : shape)
    if (d <= 0) throw ValueError("LayerNorm: normalized_shape must be positive, got " + detail::py_tuple(shape));
  if (o.elementwise_affine) {
    weight = register_parameter("weight", empty_parameter(shape));
    if (o.bias) bias = register_parameter("bias", empty_parameter(shape));
  }
  reset_parameters();
}

void LayerNorm::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNorm::forward(const Tensor& x) {
  const size_t k = normalized_shape.size();
  const bool ok = size_t(x.dim()) >= k && Shape(x.sizes().end() - std::ptrdiff_t(k), x.sizes().end()) == normalized_shape;
  if (!ok)
    throw_shape_error("LayerNorm", "input of shape " + format_shape(x.sizes()) + " does not end in normalized_shape " +
                                       format_shape(normalized_shape),
                      "normalized_shape must match the input's trailing dims");
  return rt::layer_norm(x, normalized_shape, weight, bias, options.eps);
}

std::string LayerNorm::extra_repr() const {
  return detail::py_tuple(normalized_shape) + ", eps=" + detail::py_float(options.eps) +
         ", elementwise_affine=" + detail::py_bool(options.elementwise_affine);
}

}  // namespace rt::nn
