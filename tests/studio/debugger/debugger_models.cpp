#include "debugger_models.h"

namespace rt::studio::test {

Mlp::Mlp() : Module("Mlp") {
  fc1 = register_module("fc1", std::make_shared<nn::Linear>(6, 16));
  fc2 = register_module("fc2", std::make_shared<nn::Linear>(16, 4));
}

Tensor Mlp::forward(const Tensor& x) { return (*fc2)(relu((*fc1)(x))); }

TinyConv::TinyConv() : Module("TinyConv") {
  conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(1, 4, 3, nn::Conv2dOptions{.padding = {1}}));
  fc = register_module("fc", std::make_shared<nn::Linear>(4 * 6 * 6, 3));
}

Tensor TinyConv::forward(const Tensor& x) { return (*fc)(flatten(relu((*conv1)(x)), 1)); }

Tensor nan_loss(Mlp& mlp, const Tensor& x) { return sqrt(mlp(x)).mean(); }

}  // namespace rt::studio::test
