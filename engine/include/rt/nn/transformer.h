// rt/nn/transformer.h — one Transformer encoder layer (torch.nn.TransformerEncoderLayer).
//
//   auto layer = std::make_shared<rt::nn::TransformerEncoderLayer>(
//       512, 8, rt::nn::TransformerEncoderLayerOptions{.dim_feedforward = 2048, .batch_first = true});
//   rt::Tensor y = (*layer)(x);                               // x [N, L, 512]
//   rt::Tensor z = layer->forward(x, causal_mask, padding);   // with masks (MultiheadAttention's conventions)
//
// Post-norm (default):  x = norm1(x + dropout1(self_attn(x))); x = norm2(x + dropout2(ff(x)))
// Pre-norm (norm_first): x = x + dropout1(self_attn(norm1(x))); x = x + dropout2(ff(norm2(x)))
// where ff(x) = linear2(dropout(activation(linear1(x)))) and activation is "relu" or "gelu"
// (erf form). Children, in PyTorch's order and names: self_attn, linear1, dropout, linear2,
// norm1, norm2, dropout1, dropout2; parameters "self_attn.in_proj_weight", ...,
// "linear1.weight", ..., "norm2.bias". Input layout follows batch_first like
// MultiheadAttention.
#pragma once
#include <memory>
#include <string>

#include "rt/export.h"
#include "rt/nn/attention.h"
#include "rt/nn/dropout.h"
#include "rt/nn/linear.h"
#include "rt/nn/normalization.h"

RT_API_BEGIN

namespace rt::nn {

struct TransformerEncoderLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  std::string activation = "relu";
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  bool bias = true;
};

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, const TransformerEncoderLayerOptions& options = {});
  Tensor forward(const Tensor& src) override;
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {});
  using Module::operator();
  Tensor operator()(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {});

  const TransformerEncoderLayerOptions options;
  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  std::shared_ptr<LayerNorm> norm1, norm2;
};

}  // namespace rt::nn

RT_API_END
