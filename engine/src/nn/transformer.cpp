#include "rt/nn/transformer.h"

#include "rt/ops/elementwise.h"

namespace rt::nn {

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, const TransformerEncoderLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  if (o.activation != "relu" && o.activation != "gelu")
    throw ValueError("TransformerEncoderLayer: activation should be relu/gelu, not " + o.activation);
  if (o.dim_feedforward <= 0)
    throw ValueError("TransformerEncoderLayer: dim_feedforward must be positive, got " + std::to_string(o.dim_feedforward));
  self_attn = register_module("self_attn", std::make_shared<MultiheadAttention>(
                                               d_model, nhead,
                                               MultiheadAttentionOptions{.dropout = o.dropout, .bias = o.bias,
                                                                         .batch_first = o.batch_first}));
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, o.dim_feedforward, o.bias));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout));
  linear2 = register_module("linear2", std::make_shared<Linear>(o.dim_feedforward, d_model, o.bias));
  const LayerNormOptions ln{.eps = o.layer_norm_eps, .elementwise_affine = true, .bias = o.bias};
  norm1 = register_module("norm1", std::make_shared<LayerNorm>(d_model, ln));
  norm2 = register_module("norm2", std::make_shared<LayerNorm>(d_model, ln));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(o.dropout));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(o.dropout));
}

Tensor TransformerEncoderLayer::forward(const Tensor& src) { return forward(src, Tensor(), Tensor()); }

Tensor TransformerEncoderLayer::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  auto sa_block = [&](const Tensor& x) {
    MultiheadAttentionCall call{.key_padding_mask = src_key_padding_mask, .need_weights = false, .attn_mask = src_mask};
    return (*dropout1)((*self_attn)(x, x, x, call).first);
  };
  auto ff_block = [&](const Tensor& x) {
    Tensor h = (*linear1)(x);
    h = options.activation == "relu" ? rt::relu(h) : rt::gelu(h);
    return (*dropout2)((*linear2)((*dropout)(h)));
  };
  Tensor x = src;
  if (options.norm_first) {
    x = x + sa_block((*norm1)(x));
    x = x + ff_block((*norm2)(x));
  } else {
    x = (*norm1)(x + sa_block(x));
    x = (*norm2)(x + ff_block(x));
  }
  return x;
}

Tensor TransformerEncoderLayer::operator()(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  auto s = scope();
  return forward(src, src_mask, src_key_padding_mask);
}

}  // namespace rt::nn
