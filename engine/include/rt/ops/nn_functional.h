// rt/ops/nn_functional.h — activations' normalised cousins, losses, norms, attention.
//
//   auto logp = rt::log_softmax(logits, -1);
//   auto loss = rt::cross_entropy(logits, targets);           // targets: int64 class indices
//   auto y = rt::layer_norm(x, {512}, gamma, beta);
//   auto a = rt::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
//
// `reduction` is "mean", "sum" or "none", as in torch.nn.functional.
#pragma once
#include <string>

#include "rt/export.h"
#include "rt/tensor.h"

RT_API_BEGIN

namespace rt {

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// input [N, C] or [N, C, d1...] logits; target int64 class indices [N] or [N, d1...].
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {},
                int64_t ignore_index = -100, const std::string& reduction = "mean");
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        const std::string& reduction = "mean", const Tensor& pos_weight = {});

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// training: normalise with batch statistics and update running_mean/var in place (momentum);
// eval: use the running statistics. Input [N, C] or [N, C, ...].
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);
// q [..., L, E], k [..., S, E], v [..., S, Ev]; attn_mask bool (true = attend) or additive float.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

inline Tensor Tensor::softmax(int64_t d) const { return rt::softmax(*this, d); }
inline Tensor Tensor::log_softmax(int64_t d) const { return rt::log_softmax(*this, d); }

}  // namespace rt

RT_API_END
