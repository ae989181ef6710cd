#include "rt/nn/activation.h"

#include "rt/ops/elementwise.h"

namespace rt::nn {

Tensor ReLU::forward(const Tensor& x) { return rt::relu(x); }

GELU::GELU(std::string approx) : Module("GELU"), approximate(std::move(approx)) {
  if (approximate != "none" && approximate != "tanh")
    throw ValueError("GELU: approximate must be 'none' or 'tanh', got '" + approximate + "'");
}

Tensor GELU::forward(const Tensor& x) { return rt::gelu(x, approximate); }

std::string GELU::extra_repr() const { return "approximate='" + approximate + "'"; }

Tensor SiLU::forward(const Tensor& x) { return rt::silu(x); }
Tensor Tanh::forward(const Tensor& x) { return rt::tanh(x); }
Tensor Sigmoid::forward(const Tensor& x) { return rt::sigmoid(x); }

}  // namespace rt::nn
