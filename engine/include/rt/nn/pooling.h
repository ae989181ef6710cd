// rt/nn/pooling.h — max and average pooling over NCHW input (torch.nn.MaxPool2d, AvgPool2d).
//
//   rt::nn::MaxPool2d pool(2);                                  // stride defaults to kernel_size
//   auto y = pool(rt::randn({8, 16, 32, 32}));                  // [8, 16, 16, 16]
//   rt::nn::AvgPool2d avg({3, 3}, {.stride = {1}, .padding = {1}, .count_include_pad = false});
//
// Sizes take one value (both dims) or two; an empty stride means kernel_size. No parameters.
#pragma once
#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

struct MaxPool2dOptions {
  Shape stride = {};
  Shape padding = {0};
  Shape dilation = {1};
  bool ceil_mode = false;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(const Shape& kernel_size, const MaxPool2dOptions& options = {});
  explicit MaxPool2d(int64_t kernel_size, const MaxPool2dOptions& options = {})
      : MaxPool2d(Shape{kernel_size}, options) {}
  Tensor forward(const Tensor& x) override;
  // "kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False"
  std::string extra_repr() const override;

  const Shape kernel_size, stride, padding, dilation;  // as given (one or two values)
  const bool ceil_mode;
};

struct AvgPool2dOptions {
  Shape stride = {};
  Shape padding = {0};
  bool ceil_mode = false;
  bool count_include_pad = true;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(const Shape& kernel_size, const AvgPool2dOptions& options = {});
  explicit AvgPool2d(int64_t kernel_size, const AvgPool2dOptions& options = {})
      : AvgPool2d(Shape{kernel_size}, options) {}
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "kernel_size=2, stride=2, padding=0"

  const Shape kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;
};

}  // namespace rt::nn

RT_API_END
