// rt/nn/attention.h — multi-head attention (torch.nn.MultiheadAttention).
//
//   auto mha = std::make_shared<rt::nn::MultiheadAttention>(512, 8, rt::nn::MultiheadAttentionOptions{.batch_first = true});
//   auto [out, weights] = (*mha)(x, x, x);            // x [N, L, 512] -> out [N, L, 512], weights [N, L, L]
//   auto [y, none] = (*mha)(q, k, v, {.key_padding_mask = pad, .need_weights = false});   // none is undefined
//
// Shapes (E = embed_dim, H = num_heads, D = E / H): query [L, N, E], key/value [S, N, E]
// ([N, L, E] / [N, S, E] with batch_first; unbatched [L, E] / [S, E] also work).
// - key_padding_mask [N, S] ([S] unbatched): bool, true = ignore that key; or float, added to
//   the scores.
// - attn_mask [L, S] or [N * H, L, S]: bool, true = NOT allowed to attend (PyTorch's MHA
//   convention, the opposite of scaled_dot_product_attention's); or float, added to the scores.
// - need_weights: also return the attention weights after softmax and dropout, averaged over
//   heads ([N, L, S]) when average_attn_weights, else per head ([N, H, L, S]). Without it the
//   fused rt::scaled_dot_product_attention path runs and the second result is undefined.
// - dropout applies to the attention weights in training mode only.
// Parameters, with PyTorch's names: in_proj_weight [3E, E] (xavier_uniform_), in_proj_bias
// [3E] (zeros), out_proj.weight [E, E] (Linear's init), out_proj.bias [E] (zeros). Only equal
// query/key/value dims (kdim = vdim = embed_dim) are supported. embed_dim must be divisible by
// num_heads (ValueError); wrong input shapes throw ShapeError naming the module path.
#pragma once
#include <memory>
#include <utility>

#include "rt/export.h"
#include "rt/nn/linear.h"

RT_API_BEGIN

namespace rt::nn {

// PyTorch's type for MultiheadAttention::out_proj: a Linear that prints under its own name.
class NonDynamicallyQuantizableLinear : public Linear {
 public:
  NonDynamicallyQuantizableLinear(int64_t in_features, int64_t out_features, bool bias = true)
      : Linear(in_features, out_features, bias) {
    set_type_name("NonDynamicallyQuantizableLinear");
  }
};

struct MultiheadAttentionOptions {
  double dropout = 0.0;
  bool bias = true;
  bool batch_first = false;
};

struct MultiheadAttentionCall {
  Tensor key_padding_mask = {};
  bool need_weights = true;
  Tensor attn_mask = {};
  bool average_attn_weights = true;
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, const MultiheadAttentionOptions& options = {});

  // {attn_output, attn_weights}; attn_weights is undefined unless call.need_weights.
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const MultiheadAttentionCall& call = {});
  // The same inside this module's scope.
  std::pair<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const MultiheadAttentionCall& call = {});
  void reset_parameters();

  const int64_t embed_dim, num_heads, head_dim;
  const MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;
  std::shared_ptr<Linear> out_proj;
};

}  // namespace rt::nn

RT_API_END
