// rt/nn/normalization.h — BatchNorm2d and LayerNorm (torch.nn.BatchNorm2d, LayerNorm).
//
//   auto bn = std::make_shared<rt::nn::BatchNorm2d>(16);          // input [N, 16, H, W]
//   auto y = (*bn)(x);          // training: batch statistics, running stats updated
//   bn->eval();                 // eval: running_mean / running_var are used
//   rt::nn::LayerNorm ln(512);                                     // normalises the last dim
//   rt::nn::LayerNorm ln2({8, 8}, {.eps = 1e-6, .elementwise_affine = false});
//
// BatchNorm2d state, in state_dict order: weight (ones), bias (zeros) when affine;
// running_mean (zeros), running_var (ones), num_batches_tracked (int64 0-dim) when
// track_running_stats. In training each forward adds 1 to num_batches_tracked and updates the
// running stats with `momentum` (or a cumulative average, 1 / num_batches_tracked, when
// momentum is nullopt); running_var uses the unbiased batch variance, as in PyTorch. Without
// running stats the batch statistics are used in eval mode too. Input must be 4-D with
// num_features channels (ShapeError otherwise).
// LayerNorm normalises over the trailing normalized_shape dims; weight (ones) and bias (zeros)
// of that shape when elementwise_affine (bias only when `bias`).
#pragma once
#include <optional>

#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

struct BatchNormOptions {
  double eps = 1e-5;
  std::optional<double> momentum = 0.1;
  bool affine = true;
  bool track_running_stats = true;
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, const BatchNormOptions& options = {});
  Tensor forward(const Tensor& x) override;
  // "16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True"
  std::string extra_repr() const override;
  void reset_running_stats();
  void reset_parameters();

  const int64_t num_features;
  const BatchNormOptions options;
  Tensor weight, bias;                                       // [num_features] when affine
  Tensor running_mean, running_var, num_batches_tracked;    // when track_running_stats
};

struct LayerNormOptions {
  double eps = 1e-5;
  bool elementwise_affine = true;
  bool bias = true;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(const Shape& normalized_shape, const LayerNormOptions& options = {});
  explicit LayerNorm(int64_t normalized_shape, const LayerNormOptions& options = {})
      : LayerNorm(Shape{normalized_shape}, options) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "(512,), eps=1e-05, elementwise_affine=True"
  void reset_parameters();

  const Shape normalized_shape;
  const LayerNormOptions options;
  Tensor weight, bias;
};

}  // namespace rt::nn

RT_API_END
