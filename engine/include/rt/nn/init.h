// rt/nn/init.h — filling parameters in place with PyTorch's initialisation schemes.
//
//   auto w = rt::nn::empty_parameter({128, 64});
//   rt::nn::init::kaiming_uniform_(w, std::sqrt(5.0));   // nn.Linear's default weight init
//   rt::nn::init::xavier_uniform_(w, rt::nn::init::calculate_gain("tanh"));
//   rt::nn::init::zeros_(bias);
//
// Contracts: every function writes into the tensor's storage under NoGradGuard (so leaves that
// require grad are fine), draws from the default generator (rt::manual_seed makes it
// reproducible) and returns the same handle. Fan-based schemes need at least 2 dims and throw
// ValueError otherwise; for a weight [out, in, k...], fan_in = in * prod(k) and
// fan_out = out * prod(k), as in torch.nn.init._calculate_fan_in_and_fan_out.
#pragma once
#include <optional>
#include <string>
#include <utility>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt::nn::init {

// Recommended gain for a nonlinearity: "linear", "conv1d", "conv2d", "sigmoid" -> 1,
// "tanh" -> 5/3, "relu" -> sqrt(2), "leaky_relu" -> sqrt(2 / (1 + param^2)) (param defaults to
// 0.01), "selu" -> 3/4. Unknown names throw ValueError.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);
// {fan_in, fan_out}.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor uniform_(Tensor t, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor t, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor t, const Scalar& value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor t, double gain = 1.0);
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor t, double gain = 1.0);
// U(-bound, bound) with bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a),
// fan = fan_in or fan_out by `mode`.
Tensor kaiming_uniform_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");

}  // namespace rt::nn::init

RT_API_END
