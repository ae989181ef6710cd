// tests/studio/debugger/debugger_models.h — small real models for the debugger panels' tests.
//
//   auto mlp = std::make_shared<rt::studio::test::Mlp>();       // fc1 -> relu -> fc2
//   rt::Tensor loss = rt::studio::test::nan_loss(*mlp, rt::randn({8, 6}));   // sqrt of negatives: NaN
//   auto conv = std::make_shared<rt::studio::test::TinyConv>(); // conv1 -> relu -> flatten -> fc
#pragma once
#include <memory>

#include "rt/rt.h"

namespace rt::studio::test {

struct Mlp : nn::Module {
  std::shared_ptr<nn::Linear> fc1, fc2;
  Mlp();
  Tensor forward(const Tensor& x) override;
};

struct TinyConv : nn::Module {
  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::Linear> fc;
  TinyConv();
  Tensor forward(const Tensor& x) override;  // x: [N, 1, 6, 6]
};

// mean(sqrt(mlp(x))): some outputs are negative, so SqrtBackward0 produces NaN gradients.
Tensor nan_loss(Mlp& mlp, const Tensor& x);

}  // namespace rt::studio::test
