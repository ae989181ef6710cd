#include "gpu_models.h"

#include <cmath>
#include <string>

namespace gpu_models {
namespace {

rt::Tensor to_leaf(const rt::Tensor& cpu_values, rt::Device device) {
  rt::Tensor t = cpu_values.to(device).detach();
  t.requires_grad_();
  return t;
}

rt::Tensor uniform(const rt::Shape& shape, double bound) { return (rt::rand(shape) * 2.0 - 1.0) * bound; }

}  // namespace

Mlp::Mlp(const std::vector<int64_t>& sizes, rt::Device device) {
  if (sizes.size() < 2) throw rt::ValueError("gpu_models::Mlp: give at least the input and output sizes");
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const double bound = 1.0 / std::sqrt(double(sizes[i]));
    weights_.push_back(to_leaf(uniform({sizes[i + 1], sizes[i]}, bound), device));
    biases_.push_back(to_leaf(uniform({sizes[i + 1]}, bound), device));
    params_.push_back(weights_.back());
    params_.push_back(biases_.back());
  }
}

rt::Tensor Mlp::forward(const rt::Tensor& x) const {
  rt::Tensor h = x;
  for (size_t i = 0; i < weights_.size(); ++i) {
    rt::ModuleScope scope("fc" + std::to_string(i));
    h = rt::linear(h, weights_[i], biases_[i]);
    if (i + 1 < weights_.size()) h = rt::relu(h);
  }
  return h;
}

rt::Tensor CharTransformer::param(const rt::Tensor& cpu_values) {
  params_.push_back(to_leaf(cpu_values, device_));
  return params_.back();
}

CharTransformer::CharTransformer(const CharTransformerConfig& c, rt::Device device) : config(c), device_(device) {
  if (c.d_model % c.heads != 0)
    throw rt::ValueError("gpu_models::CharTransformer: d_model " + std::to_string(c.d_model) +
                         " is not a multiple of heads " + std::to_string(c.heads));
  const int64_t d = c.d_model;
  auto normal = [](const rt::Shape& s) { return rt::randn(s) * 0.02; };
  wte_ = param(normal({c.vocab, d}));
  wpe_ = param(normal({c.context, d}));
  for (int64_t i = 0; i < c.layers; ++i) {
    Block b;
    b.ln1_w = param(rt::ones({d}));
    b.ln1_b = param(rt::zeros({d}));
    b.attn_in_w = param(normal({3 * d, d}));
    b.attn_in_b = param(rt::zeros({3 * d}));
    b.attn_out_w = param(normal({d, d}));
    b.attn_out_b = param(rt::zeros({d}));
    b.ln2_w = param(rt::ones({d}));
    b.ln2_b = param(rt::zeros({d}));
    b.fc1_w = param(normal({4 * d, d}));
    b.fc1_b = param(rt::zeros({4 * d}));
    b.fc2_w = param(normal({d, 4 * d}));
    b.fc2_b = param(rt::zeros({d}));
    blocks_.push_back(b);
  }
  lnf_w_ = param(rt::ones({d}));
  lnf_b_ = param(rt::zeros({d}));
  head_w_ = param(normal({c.vocab, d}));
}

rt::Tensor CharTransformer::block(const Block& b, const rt::Tensor& x) const {
  const int64_t n = x.size(0), t = x.size(1), d = config.d_model, h = config.heads;
  rt::Tensor y;
  {
    rt::ModuleScope scope("attn");
    const rt::Tensor qkv = rt::linear(rt::layer_norm(x, {d}, b.ln1_w, b.ln1_b), b.attn_in_w, b.attn_in_b);
    auto heads = [&](int64_t part) { return qkv.narrow(2, part * d, d).reshape({n, t, h, d / h}).transpose(1, 2); };
    const rt::Tensor a = rt::scaled_dot_product_attention(heads(0), heads(1), heads(2), {}, 0.0, /*is_causal=*/true);
    y = x + rt::linear(a.transpose(1, 2).reshape({n, t, d}), b.attn_out_w, b.attn_out_b);
  }
  rt::ModuleScope scope("mlp");
  const rt::Tensor f = rt::gelu(rt::linear(rt::layer_norm(y, {d}, b.ln2_w, b.ln2_b), b.fc1_w, b.fc1_b));
  return y + rt::linear(f, b.fc2_w, b.fc2_b);
}

rt::Tensor CharTransformer::loss(const rt::Tensor& tokens) const {
  const int64_t t = config.context;
  if (tokens.dim() != 2 || tokens.size(1) != t + 1)
    throw rt::ValueError("CharTransformer::loss: tokens must be [batch, " + std::to_string(t + 1) + "], got " +
                         rt::format_shape(tokens.sizes()));
  const int64_t n = tokens.size(0);
  const rt::Tensor input = tokens.narrow(1, 0, t).contiguous(), target = tokens.narrow(1, 1, t).contiguous();
  const rt::Tensor pos = rt::arange(t, rt::TensorOptions(rt::kInt64).with_device(device_));
  rt::Tensor x;
  {
    rt::ModuleScope scope("embed");
    x = rt::embedding(wte_, input) + rt::embedding(wpe_, pos);
  }
  for (size_t i = 0; i < blocks_.size(); ++i) {
    rt::ModuleScope scope("h" + std::to_string(i));
    x = block(blocks_[i], x);
  }
  rt::ModuleScope scope("head");
  const rt::Tensor logits = rt::linear(rt::layer_norm(x, {config.d_model}, lnf_w_, lnf_b_), head_w_);
  return rt::cross_entropy(logits.reshape({n * t, config.vocab}), target.reshape({n * t}));
}

}  // namespace gpu_models
