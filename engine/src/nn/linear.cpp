#include "rt/nn/linear.h"

#include <cmath>

#include "repr.h"
#include "rt/nn/init.h"
#include "rt/ops/linalg.h"

namespace rt::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias) : Module("Linear"), in_features(in), out_features(out) {
  if (in < 0 || out < 0)
    throw ValueError("Linear: in_features and out_features must be non-negative, got " + std::to_string(in) + " and " +
                     std::to_string(out));
  weight = register_parameter("weight", empty_parameter({out, in}));
  if (with_bias) bias = register_parameter("bias", empty_parameter({out}));
  reset_parameters();
}

void Linear::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = in_features > 0 ? 1.0 / std::sqrt(double(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Linear::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != in_features)
    throw_shape_error("Linear", "input of shape " + format_shape(x.sizes()) + " does not end in in_features=" +
                                    std::to_string(in_features) + " (weight " + format_shape(weight.sizes()) + ")",
                      "the layer before produces a different feature size; check in_features or flatten the input");
  return rt::linear(x, weight, bias);
}

std::string Linear::extra_repr() const {
  return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
         ", bias=" + detail::py_bool(bias.defined());
}

}  // namespace rt::nn
