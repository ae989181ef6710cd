#include "rt/nn/attention.h"

#include <cmath>
#include <limits>

#include "repr.h"
#include "rt/nn/init.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/reduce.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt::nn {

namespace {

constexpr const char* kOp = "MultiheadAttention";

// A bool mask (true = masked out) becomes an additive -inf mask; a float mask is used as is.
Tensor additive(const Tensor& mask, ScalarType dtype) {
  if (mask.dtype() == kBool)
    return rt::zeros(mask.sizes(), TensorOptions(dtype).with_device(mask.device()))
        .masked_fill(mask, -std::numeric_limits<double>::infinity());
  if (!is_floating(mask.dtype()))
    throw DTypeError(std::string(kOp) + ": only bool and floating masks are supported, got " +
                     std::string(dtype_name(mask.dtype())) + module_context());
  return mask.dtype() == dtype ? mask : mask.to(dtype);
}

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t E, int64_t H, const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), embed_dim(E), num_heads(H), head_dim(H > 0 ? E / H : 0), options(o) {
  if (E <= 0 || H <= 0)
    throw ValueError("MultiheadAttention: embed_dim and num_heads must be positive, got " + std::to_string(E) + " and " +
                     std::to_string(H));
  if (E % H != 0)
    throw ValueError("MultiheadAttention: embed_dim must be divisible by num_heads, got embed_dim=" + std::to_string(E) +
                     " and num_heads=" + std::to_string(H));
  if (!(o.dropout >= 0.0 && o.dropout <= 1.0))
    throw ValueError("MultiheadAttention: dropout must lie in [0, 1], got " + detail::py_float(o.dropout));
  in_proj_weight = register_parameter("in_proj_weight", empty_parameter({3 * E, E}));
  if (o.bias) in_proj_bias = register_parameter("in_proj_bias", empty_parameter({3 * E}));
  out_proj = register_module("out_proj", std::make_shared<NonDynamicallyQuantizableLinear>(E, E, o.bias));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) init::zeros_(in_proj_bias);
  if (out_proj->bias.defined()) init::zeros_(out_proj->bias);
}

std::pair<Tensor, Tensor> MultiheadAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                                         const MultiheadAttentionCall& call) {
  auto s = scope();
  return forward(query, key, value, call);
}

std::pair<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                      const MultiheadAttentionCall& call) {
  const int64_t E = embed_dim, H = num_heads, D = head_dim;
  const bool batched = query.dim() == 3;
  const std::string shapes = "query " + format_shape(query.sizes()) + ", key " + format_shape(key.sizes()) +
                             ", value " + format_shape(value.sizes());
  if ((query.dim() != 2 && query.dim() != 3) || key.dim() != query.dim() || value.dim() != query.dim())
    throw_shape_error(kOp, "expected query, key and value all 3-D (batched) or all 2-D (unbatched), got " + shapes);
  if (query.size(-1) != E || key.size(-1) != E || value.size(-1) != E)
    throw_shape_error(kOp, "the last dimension of query, key and value must be embed_dim=" + std::to_string(E) +
                               ", got " + shapes, "kdim/vdim different from embed_dim are not supported");

  // Work in [N, L, E].
  auto to_nle = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(0);
    return options.batch_first ? t : t.transpose(0, 1);
  };
  Tensor q = to_nle(query), k = to_nle(key), v = to_nle(value);
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  if (k.size(0) != N || v.size(0) != N || v.size(1) != S)
    throw_shape_error(kOp, "key and value must have the batch size of query and the same length, got " + shapes,
                      options.batch_first ? "batch_first=true expects [N, L, E]" : "batch_first=false expects [L, N, E]");

  if (query.is_same(key) && key.is_same(value)) {
    TensorList qkv = rt::linear(q, in_proj_weight, in_proj_bias).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto part = [&](const Tensor& t, int64_t i) { return t.defined() ? t.narrow(0, i * E, E) : Tensor(); };
    q = rt::linear(q, part(in_proj_weight, 0), part(in_proj_bias, 0));
    k = rt::linear(k, part(in_proj_weight, 1), part(in_proj_bias, 1));
    v = rt::linear(v, part(in_proj_weight, 2), part(in_proj_bias, 2));
  }
  q = q.reshape({N, L, H, D}).transpose(1, 2);  // [N, H, L, D]
  k = k.reshape({N, S, H, D}).transpose(1, 2);
  v = v.reshape({N, S, H, D}).transpose(1, 2);

  Tensor mask;
  if (call.attn_mask.defined()) {
    const Tensor& m = call.attn_mask;
    if (m.dim() == 2 && m.sizes() == Shape{L, S}) {
      mask = additive(m, q.dtype());
    } else if (m.dim() == 3 && m.sizes() == Shape{N * H, L, S}) {
      mask = additive(m, q.dtype()).reshape({N, H, L, S});
    } else {
      throw_shape_error(kOp, "attn_mask of shape " + format_shape(m.sizes()) + " does not match [L, S] = " +
                                 format_shape({L, S}) + " or [N * num_heads, L, S] = " + format_shape({N * H, L, S}) +
                                 " for " + shapes);
    }
  }
  if (call.key_padding_mask.defined()) {
    const Tensor& m = call.key_padding_mask;
    const Shape expected = batched ? Shape{N, S} : Shape{S};
    if (m.sizes() != expected)
      throw_shape_error(kOp, "key_padding_mask of shape " + format_shape(m.sizes()) + " does not match [N, S] = " +
                                 format_shape(expected) + " for " + shapes,
                        "true marks a padded key position to ignore");
    Tensor kpm = additive(m, q.dtype()).reshape({N, 1, 1, S});
    mask = mask.defined() ? mask + kpm : kpm;
  }

  const double p = is_training() ? options.dropout : 0.0;
  Tensor out, weights;
  if (call.need_weights) {
    Tensor scores = rt::matmul(q * (1.0 / std::sqrt(double(D))), k.transpose(-2, -1));  // [N, H, L, S]
    if (mask.defined()) scores = scores + mask;
    Tensor attn = rt::softmax(scores, -1);
    if (p > 0.0) attn = rt::dropout(attn, p, true);
    out = rt::matmul(attn, v);
    weights = call.average_attn_weights ? attn.mean({1}) : attn;
    if (!batched) weights = weights.squeeze(0);
  } else {
    out = rt::scaled_dot_product_attention(q, k, v, mask, p);
  }
  out = (*out_proj)(out.transpose(1, 2).reshape({N, L, E}));
  if (!batched) out = out.squeeze(0);
  else if (!options.batch_first) out = out.transpose(0, 1);
  return {out, weights};
}

}  // namespace rt::nn
