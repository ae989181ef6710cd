// rt/nn/conv.h — 2-D convolution over NCHW input (torch.nn.Conv2d).
//
//   auto conv = std::make_shared<rt::nn::Conv2d>(3, 16, 3, rt::nn::Conv2dOptions{.padding = {1}});
//   rt::Tensor y = (*conv)(rt::randn({8, 3, 32, 32}));        // [8, 16, 32, 32]
//   rt::nn::Conv2d dw(16, 16, {3, 3}, {.stride = {2}, .groups = 16, .bias = false});
//
// kernel_size, stride, padding and dilation take one value (both dims) or two (H, W).
// Weight [out_channels, in_channels / groups, kH, kW] ~ kaiming_uniform_(a = sqrt(5)); bias
// ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in_channels / groups * kH * kW.
// Both channel counts must be divisible by groups (ValueError). Only zero padding exists.
#pragma once
#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

struct Conv2dOptions {
  Shape stride = {1};
  Shape padding = {0};
  Shape dilation = {1};
  int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, const Shape& kernel_size, const Conv2dOptions& options = {});
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const Conv2dOptions& options = {})
      : Conv2d(in_channels, out_channels, Shape{kernel_size}, options) {}
  Tensor forward(const Tensor& x) override;
  // "3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)"
  std::string extra_repr() const override;
  void reset_parameters();

  const int64_t in_channels, out_channels;
  const Shape kernel_size, stride, padding, dilation;  // two values each
  const int64_t groups;
  Tensor weight, bias;
};

}  // namespace rt::nn

RT_API_END
