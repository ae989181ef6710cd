// rt/nn/flatten.h — flattens a range of dims (torch.nn.Flatten).
//
//   rt::nn::Flatten flat;                  // start_dim=1, end_dim=-1: keeps the batch dim
//   auto y = flat(rt::zeros({8, 16, 4, 4}));   // [8, 256]
#pragma once
#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "start_dim=1, end_dim=-1"

  const int64_t start_dim, end_dim;
};

}  // namespace rt::nn

RT_API_END
