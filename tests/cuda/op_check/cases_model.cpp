// Whole steps: a 2-layer MLP trained 3 AdamW steps on each device from the same init (parameters
// and losses must stay close), and a causal self-attention block, forward and backward.
#include <cmath>

#include "cases.h"

namespace rt::op_check {
namespace {

Tensor fresh_leaf(const Tensor& t) { return t.detach().clone().requires_grad_(); }

TensorList train_mlp(const TensorList& in, Device) {
  // in: W1 [32, 20], b1 [32], W2 [5, 32], b2 [5], x [16, 20], y [16] (int64)
  TensorList params = {fresh_leaf(in[0]), fresh_leaf(in[1]), fresh_leaf(in[2]), fresh_leaf(in[3])};
  rt::optim::AdamW opt(params, {.lr = 1e-2, .weight_decay = 0.05});
  TensorList losses;
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    Tensor h = rt::relu(rt::linear(in[4], params[0], params[1]));
    Tensor loss = rt::cross_entropy(rt::linear(h, params[2], params[3]), in[5]);
    loss.backward();
    opt.step();
    losses.push_back(loss.detach());
  }
  TensorList out;
  for (const Tensor& p : params) out.push_back(p.detach());
  out.push_back(rt::stack(losses));
  return out;
}

// in: tokens [B, T] int64, embedding [V, D], ln weight [D], ln bias [D], Wqkv [3D, D], bqkv [3D], Wo [D, D], bo [D]
Tensor attention_block(const TensorList& in, Device d) {
  const int64_t B = in[0].size(0), T = in[0].size(1), D = in[1].size(1), H = 2, Dh = D / H;
  Tensor h = rt::embedding(in[1], in[0]);                               // [B, T, D]
  Tensor x = rt::layer_norm(h, {D}, in[2], in[3]);
  TensorList qkv = rt::linear(x, in[4], in[5]).chunk(3, -1);            // 3 x [B, T, D]
  auto heads = [&](const Tensor& t) { return t.reshape({B, T, H, Dh}).transpose(1, 2); };  // [B, H, T, Dh]
  Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
  Tensor causal = rt::ones({T, T}, kBool).triu(1).to(d);                 // true above the diagonal: masked
  Tensor att = rt::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(Dh)));
  att = rt::softmax(rt::masked_fill(att, causal, -INFINITY), -1);
  Tensor y = rt::matmul(att, v).transpose(1, 2).contiguous().view({B, T, D});
  return h + rt::linear(rt::gelu(y), in[6], in[7]);
}

}  // namespace

void add_model_cases(OpCheck& check) {
  check.run({.op = "mlp AdamW", .variant = "3 steps",
             .inputs = {randn_t({32, 20}) * 0.2, randn_t({32}) * 0.1, randn_t({5, 32}) * 0.2, randn_t({5}) * 0.1, randn_t({16, 20}),
                        randint_t(0, 5, {16})},
             .tol = Tol::Model, .fn = train_mlp});
  for (ScalarType dt : {kFloat32, kBFloat16}) {
    const int64_t V = 13, D = 16;
    check.run({.op = "attention block", .variant = "causal, 2 heads",
               .inputs = {randint_t(0, V, {2, 8}), randn_t({V, D}, dt), (randn_t({D}) * 0.1 + 1).to(dt), randn_t({D}, dt) * 0.1,
                          randn_t({3 * D, D}, dt) * 0.25, randn_t({3 * D}, dt) * 0.1, randn_t({D, D}, dt) * 0.25, randn_t({D}, dt) * 0.1},
               .grad = {false, true, true, true, true, true, true, true}, .tol = Tol::Model,
               .fn = one(attention_block)});
  }
}

}  // namespace rt::op_check
