#include "rt/nn/pooling.h"

#include "repr.h"
#include "rt/ops/linalg.h"

namespace rt::nn {

namespace {

void check_sizes(const char* module, const Shape& kernel, const Shape& stride, const Shape& padding) {
  for (int64_t k : detail::pair_of(kernel, module, "kernel_size"))
    if (k <= 0) throw ValueError(std::string(module) + ": kernel_size must be positive, got " + detail::py_int_or_tuple(kernel));
  for (int64_t s : detail::pair_of(stride, module, "stride"))
    if (s <= 0) throw ValueError(std::string(module) + ": stride must be positive, got " + detail::py_int_or_tuple(stride));
  for (int64_t p : detail::pair_of(padding, module, "padding"))
    if (p < 0) throw ValueError(std::string(module) + ": padding must be non-negative, got " + detail::py_int_or_tuple(padding));
}

void check_input(const char* module, const Tensor& x) {
  if (x.dim() != 3 && x.dim() != 4)
    throw_shape_error(module, "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got shape " + format_shape(x.sizes()),
                      "add a batch dim with unsqueeze(0) or reshape to NCHW");
}

}  // namespace

MaxPool2d::MaxPool2d(const Shape& kernel, const MaxPool2dOptions& o)
    : Module("MaxPool2d"),
      kernel_size(kernel),
      stride(o.stride.empty() ? kernel : o.stride),
      padding(o.padding),
      dilation(o.dilation),
      ceil_mode(o.ceil_mode) {
  check_sizes("MaxPool2d", kernel_size, stride, padding);
  for (int64_t d : detail::pair_of(dilation, "MaxPool2d", "dilation"))
    if (d <= 0) throw ValueError("MaxPool2d: dilation must be positive, got " + detail::py_int_or_tuple(dilation));
}

Tensor MaxPool2d::forward(const Tensor& x) {
  check_input("MaxPool2d", x);
  return rt::max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode);
}

std::string MaxPool2d::extra_repr() const {
  return "kernel_size=" + detail::py_int_or_tuple(kernel_size) + ", stride=" + detail::py_int_or_tuple(stride) +
         ", padding=" + detail::py_int_or_tuple(padding) + ", dilation=" + detail::py_int_or_tuple(dilation) +
         ", ceil_mode=" + detail::py_bool(ceil_mode);
}

AvgPool2d::AvgPool2d(const Shape& kernel, const AvgPool2dOptions& o)
    : Module("AvgPool2d"),
      kernel_size(kernel),
      stride(o.stride.empty() ? kernel : o.stride),
      padding(o.padding),
      ceil_mode(o.ceil_mode),
      count_include_pad(o.count_include_pad) {
  check_sizes("AvgPool2d", kernel_size, stride, padding);
}

Tensor AvgPool2d::forward(const Tensor& x) {
  check_input("AvgPool2d", x);
  return rt::avg_pool2d(x, kernel_size, stride, padding, ceil_mode, count_include_pad);
}

std::string AvgPool2d::extra_repr() const {
  return "kernel_size=" + detail::py_int_or_tuple(kernel_size) + ", stride=" + detail::py_int_or_tuple(stride) +
         ", padding=" + detail::py_int_or_tuple(padding);
}

}  // namespace rt::nn
