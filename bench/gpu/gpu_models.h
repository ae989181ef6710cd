// gpu_models.h — an MLP and a small GPT-style character model written with the engine's functional
// ops and built directly on a device, for bench/gpu's timing and profiling programs (rt::nn modules
// cannot move to CUDA from C++ yet). Parameters are leaf tensors on the device, ready for rt::optim.
//
//   gpu_models::Mlp mlp({784, 512, 512, 10}, rt::Device::cuda());   // Linear + ReLU ..., Linear
//   rt::optim::Adam opt(mlp.parameters(), {.lr = 1e-3});
//   rt::cross_entropy(mlp.forward(x), y).backward();
//   opt.step();
//
//   gpu_models::CharTransformer gpt({.vocab = 65}, rt::Device::cuda());
//   rt::Tensor loss = gpt.loss(tokens);   // tokens [B, context + 1] int64 on the device
//
// Initialisation follows PyTorch: Linear layers U(-1/sqrt(in), 1/sqrt(in)) (weights and biases);
// the transformer N(0, 0.02) weights, zero biases, LayerNorm weight 1 and bias 0 (GPT-2's). Values
// are drawn on the CPU from rt::manual_seed's generator, then copied to the device, so a seed gives
// the same model on every device. Each layer runs under an rt::ModuleScope ("fc0", "h1.attn"...),
// which profiles show as the ops' module path.
#pragma once
#include <cstdint>
#include <vector>

#include "rt/rt.h"

namespace gpu_models {

class Mlp {
 public:
  // sizes: {in, hidden..., out}; at least two entries.
  Mlp(const std::vector<int64_t>& sizes, rt::Device device);
  rt::Tensor forward(const rt::Tensor& x) const;  // x [N, in] -> logits [N, out]
  const rt::TensorList& parameters() const { return params_; }

 private:
  rt::TensorList weights_, biases_, params_;
};

struct CharTransformerConfig {
  int64_t vocab = 65;
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t layers = 2;
  int64_t context = 64;  // T: tokens per sequence
};

class CharTransformer {
 public:
  CharTransformer(const CharTransformerConfig& config, rt::Device device);
  // Next-token cross-entropy: predicts tokens[:, 1:] from tokens[:, :-1] with causal attention.
  rt::Tensor loss(const rt::Tensor& tokens) const;
  const rt::TensorList& parameters() const { return params_; }
  const CharTransformerConfig config;

 private:
  struct Block {
    rt::Tensor ln1_w, ln1_b, attn_in_w, attn_in_b, attn_out_w, attn_out_b;
    rt::Tensor ln2_w, ln2_b, fc1_w, fc1_b, fc2_w, fc2_b;
  };
  rt::Tensor block(const Block& b, const rt::Tensor& x) const;
  rt::Tensor param(const rt::Tensor& cpu_values);

  rt::Device device_;
  rt::Tensor wte_, wpe_, lnf_w_, lnf_b_, head_w_;
  std::vector<Block> blocks_;
  rt::TensorList params_;
};

}  // namespace gpu_models
