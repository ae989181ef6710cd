// rt/nn/activation.h — elementwise nonlinearities as modules (torch.nn.ReLU, GELU, ...).
//
//   auto net = rt::nn::Sequential({std::make_shared<rt::nn::Linear>(4, 8),
//                                  std::make_shared<rt::nn::GELU>("tanh"),
//                                  std::make_shared<rt::nn::Linear>(8, 1)});
//
// No parameters. GELU's approximate is "none" (erf) or "tanh" (ValueError otherwise).
#pragma once
#include <string>

#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

class ReLU : public Module {
 public:
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override;
};

class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "approximate='none'"

  const std::string approximate;
};

class SiLU : public Module {
 public:
  SiLU() : Module("SiLU") {}
  Tensor forward(const Tensor& x) override;
};

class Tanh : public Module {
 public:
  Tanh() : Module("Tanh") {}
  Tensor forward(const Tensor& x) override;
};

class Sigmoid : public Module {
 public:
  Sigmoid() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) override;
};

}  // namespace rt::nn

RT_API_END
