// rt/nn/dropout.h — zeroes elements with probability p in training (torch.nn.Dropout).
//
//   rt::nn::Dropout drop(0.1);
//   auto y = drop(x);   // training: each element is 0 with probability 0.1, else x / 0.9
//   drop.eval();
//   auto z = drop(x);   // eval: z is x
//
// p must lie in [0, 1] (ValueError). Randomness comes from the default generator.
#pragma once
#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "p=0.5, inplace=False"

  const double p;
};

}  // namespace rt::nn

RT_API_END
