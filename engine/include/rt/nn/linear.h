// rt/nn/linear.h — y = x @ weight.T + bias (torch.nn.Linear).
//
//   auto fc = std::make_shared<rt::nn::Linear>(784, 128);   // weight [128, 784], bias [128]
//   rt::Tensor y = (*fc)(rt::randn({64, 784}));             // [64, 128]; any leading dims work
//   rt::nn::Linear head(128, 10, /*bias=*/false);           // no "bias" parameter at all
//
// Initialisation (PyTorch's reset_parameters): weight ~ kaiming_uniform_(a = sqrt(5)), i.e.
// U(-1/sqrt(in), 1/sqrt(in)); bias ~ U(-1/sqrt(in), 1/sqrt(in)). Input [..., in_features];
// a wrong last dimension throws ShapeError naming the module path.
// `weight`/`bias` alias the registered parameters: change their values in place (under
// NoGradGuard) or via load_state_dict, never by assigning a new tensor.
#pragma once
#include "rt/export.h"
#include "rt/nn/module.h"

RT_API_BEGIN

namespace rt::nn {

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  std::string extra_repr() const override;  // "in_features=784, out_features=128, bias=True"
  void reset_parameters();

  const int64_t in_features, out_features;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined when bias=false
};

}  // namespace rt::nn

RT_API_END
