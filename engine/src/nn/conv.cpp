#include "rt/nn/conv.h"

#include <cmath>

#include "repr.h"
#include "rt/nn/init.h"
#include "rt/ops/linalg.h"

namespace rt::nn {

Conv2d::Conv2d(int64_t in, int64_t out, const Shape& kernel, const Conv2dOptions& o)
    : Module("Conv2d"),
      in_channels(in),
      out_channels(out),
      kernel_size(detail::pair_of(kernel, "Conv2d", "kernel_size")),
      stride(detail::pair_of(o.stride, "Conv2d", "stride")),
      padding(detail::pair_of(o.padding, "Conv2d", "padding")),
      dilation(detail::pair_of(o.dilation, "Conv2d", "dilation")),
      groups(o.groups) {
  if (groups <= 0) throw ValueError("Conv2d: groups must be a positive integer, got " + std::to_string(groups));
  if (in <= 0 || out <= 0)
    throw ValueError("Conv2d: in_channels and out_channels must be positive, got " + std::to_string(in) + " and " +
                     std::to_string(out));
  if (in % groups != 0) throw ValueError("Conv2d: in_channels (" + std::to_string(in) + ") must be divisible by groups (" + std::to_string(groups) + ")");
  if (out % groups != 0) throw ValueError("Conv2d: out_channels (" + std::to_string(out) + ") must be divisible by groups (" + std::to_string(groups) + ")");
  for (int i = 0; i < 2; ++i)
    if (kernel_size[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0 || padding[i] < 0)
      throw ValueError("Conv2d: kernel_size, stride and dilation must be positive and padding non-negative, got kernel_size=" +
                       detail::py_tuple(kernel_size) + ", stride=" + detail::py_tuple(stride) + ", padding=" +
                       detail::py_tuple(padding) + ", dilation=" + detail::py_tuple(dilation));
  weight = register_parameter("weight", empty_parameter({out, in / groups, kernel_size[0], kernel_size[1]}));
  if (o.bias) bias = register_parameter("bias", empty_parameter({out}));
  reset_parameters();
}

void Conv2d::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2d::forward(const Tensor& x) {
  if ((x.dim() != 3 && x.dim() != 4) || x.size(-3) != in_channels)
    throw_shape_error("Conv2d", "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input with C=" + std::to_string(in_channels) +
                                    " channels, got shape " + format_shape(x.sizes()) + " (weight " +
                                    format_shape(weight.sizes()) + ")",
                      "channels come first after the batch dim (NCHW)");
  return rt::conv2d(x, weight, bias, stride, padding, dilation, groups);
}

std::string Conv2d::extra_repr() const {
  std::string s = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                  ", kernel_size=" + detail::py_tuple(kernel_size) + ", stride=" + detail::py_tuple(stride);
  if (padding != Shape{0, 0}) s += ", padding=" + detail::py_tuple(padding);
  if (dilation != Shape{1, 1}) s += ", dilation=" + detail::py_tuple(dilation);
  if (groups != 1) s += ", groups=" + std::to_string(groups);
  if (!bias.defined()) s += ", bias=False";
  return s;
}

}  // namespace rt::nn
