#include "rt/nn/init.h"

#include <cmath>

#include "rt/autograd/grad_mode.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"

namespace rt::nn::init {

namespace {

int64_t fan(const Tensor& t, const std::string& mode, const char* fn) {
  if (mode != "fan_in" && mode != "fan_out")
    throw ValueError(std::string(fn) + ": mode " + mode + " not supported, please use one of fan_in, fan_out");
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return mode == "fan_in" ? in : out;
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" ||
      nonlinearity == "conv3d" || nonlinearity == "conv_transpose1d" || nonlinearity == "conv_transpose2d" ||
      nonlinearity == "conv_transpose3d" || nonlinearity == "sigmoid")
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw ValueError("calculate_gain: unsupported nonlinearity " + nonlinearity +
                   " (expected linear, conv1d, conv2d, sigmoid, tanh, relu, leaky_relu or selu)");
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (t.dim() < 2)
    throw ValueError("calculate_fan_in_and_fan_out: fan in and fan out can not be computed for a tensor with fewer "
                     "than 2 dimensions (got shape " + format_shape(t.sizes()) + ")");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

Tensor uniform_(Tensor t, double a, double b) {
  NoGradGuard ng;
  rt::uniform_(t, a, b);
  return t;
}

Tensor normal_(Tensor t, double mean, double std) {
  NoGradGuard ng;
  rt::normal_(t, mean, std);
  return t;
}

Tensor constant_(Tensor t, const Scalar& value) {
  NoGradGuard ng;
  t.fill_(value);
  return t;
}

Tensor zeros_(Tensor t) { return constant_(std::move(t), 0); }
Tensor ones_(Tensor t) { return constant_(std::move(t), 1); }

Tensor xavier_uniform_(Tensor t, double gain) {
  if (t.numel() == 0) return t;  // PyTorch: a no-op on zero-element tensors
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double a = gain * std::sqrt(6.0 / double(in + out));
  return uniform_(std::move(t), -a, a);
}

Tensor xavier_normal_(Tensor t, double gain) {
  if (t.numel() == 0) return t;
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0.0, gain * std::sqrt(2.0 / double(in + out)));
}

Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  const double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / double(fan(t, mode, "kaiming_uniform_")));
  return uniform_(std::move(t), -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(double(fan(t, mode, "kaiming_normal_")));
  return normal_(std::move(t), 0.0, std);
}

}  // namespace rt::nn::init
