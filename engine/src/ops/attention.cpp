// scaled_dot_product_attention: the math path, composed from differentiable ops.
#include <cmath>
#include <limits>

#include "../amp/autocast_policy.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/nn_functional.h"
#include "rt/ops/shape.h"
#include "rt/ops/view.h"

namespace rt {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

std::string shapes_of(const Tensor& q, const Tensor& k, const Tensor& v) {
  return "query " + format_shape(q.sizes()) + ", key " + format_shape(k.sizes()) + ", value " + format_shape(v.sizes());
}

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double dropout_p,
                  bool is_causal) {
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2)
    throw_shape_error(kOp, "expected query [..., L, E], key [..., S, E] and value [..., S, Ev], got " + shapes_of(q, k, v));
  if (!is_floating(q.dtype()) || q.dtype() != k.dtype() || q.dtype() != v.dtype())
    throw DTypeError(std::string(kOp) + ": expected query, key and value to have the same floating point dtype, got " +
                     std::string(dtype_name(q.dtype())) + ", " + std::string(dtype_name(k.dtype())) + " and " +
                     std::string(dtype_name(v.dtype())) + module_context());
  if (q.size(-1) != k.size(-1))
    throw_shape_error(kOp, shapes_of(q, k, v) + ": embedding size " + std::to_string(q.size(-1)) +
                               " (last dimension of query) != " + std::to_string(k.size(-1)) + " (last dimension of key)");
  if (k.size(-2) != v.size(-2))
    throw_shape_error(kOp, shapes_of(q, k, v) + ": sequence length " + std::to_string(k.size(-2)) +
                               " (dimension -2 of key) != " + std::to_string(v.size(-2)) + " (dimension -2 of value)",
                      "key and value must hold one entry per source position");
  if (!(dropout_p >= 0.0 && dropout_p < 1.0))
    throw ValueError(std::string(kOp) + ": dropout_p must be in [0, 1), got " + std::to_string(dropout_p) + module_context());
  if (is_causal && mask.defined())
    throw ValueError(std::string(kOp) + ": an explicit attn_mask must not be given when is_causal=true" + module_context());
  if (mask.defined() && mask.dtype() != kBool && mask.dtype() != q.dtype())
    throw DTypeError(std::string(kOp) + ": attn_mask must be bool (true = attend) or have the query's dtype " +
                     std::string(dtype_name(q.dtype())) + ", got " + std::string(dtype_name(mask.dtype())) +
                     module_context());
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                                    double dropout_p, bool is_causal, std::optional<double> scale) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&q, &k, &v, &attn_mask}); ac)
    return scaled_dot_product_attention(ac[0], ac[1], ac[2], ac[3], dropout_p, is_causal, scale);
  OpGuard guard(kOp, q, k, v, attn_mask);
  check_inputs(q, k, v, attn_mask, dropout_p, is_causal);
  const int64_t L = q.size(-2), S = k.size(-2);
  const double sc = scale ? *scale : 1.0 / std::sqrt(double(q.size(-1)));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * sc;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  if (is_causal) scores = masked_fill(scores, triu(ones({L, S}, kBool), 1).to(scores.device()), kNegInf);
  if (attn_mask.defined()) {
    const Shape& ss = scores.sizes();
    if (broadcast_shapes(attn_mask.sizes(), ss, kOp) != ss)
      throw_shape_error(kOp, "attn_mask of shape " + format_shape(attn_mask.sizes()) +
                                 " must broadcast to the attention weights' shape " + format_shape(ss) + " (" +
                                 shapes_of(q, k, v) + ")",
                        "use a [L, S] mask, or [N, 1, L, S] to share it across heads");
    scores = attn_mask.dtype() == kBool ? masked_fill(scores, logical_not(attn_mask), kNegInf) : scores + attn_mask;
  }
  Tensor weights = softmax(scores, -1);
  if (dropout_p > 0.0) weights = dropout(weights, dropout_p, true);
  return matmul(weights, v);
}

}  // namespace rt
