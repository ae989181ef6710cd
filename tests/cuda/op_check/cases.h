// The op check's cases, one file per op family, and the CPU input makers they share.
//
//   void add_pointwise_cases(OpCheck& check) {
//     for (ScalarType dt : kFloatTypes)
//       check.run({.op = "exp", .inputs = {uniform_t({3, 7}, -3, 3, dt)}, .grad = {true},
//                  .fn = [](const TensorList& in, Device) { return TensorList{rt::exp(in[0])}; }});
//   }
//
// Every input maker draws from the default generator on the CPU (main() seeds it once), so a run
// of the program always checks the same values.
#pragma once
#include "harness.h"

namespace rt::op_check {

inline constexpr ScalarType kFloatTypes[] = {kFloat32, kFloat16, kBFloat16};

// N(0, 1) values stored as dt.
Tensor randn_t(const Shape& shape, ScalarType dt = kFloat32);
// U[lo, hi) values stored as dt.
Tensor uniform_t(const Shape& shape, double lo, double hi, ScalarType dt = kFloat32);
// Integers in [lo, hi) stored as dt (int64 by default).
Tensor randint_t(int64_t lo, int64_t hi, const Shape& shape, ScalarType dt = kInt64);
// Bool tensor, true with probability p.
Tensor mask_t(const Shape& shape, double p);

// Wraps a single-output expression as a case function.
template <typename F>
CaseFn one(F f) {
  return [f](const TensorList& in, Device d) { return TensorList{f(in, d)}; };
}

void add_arith_cases(OpCheck& check);      // add/sub/mul/div, broadcasting, promotion, scalars, in-place
void add_unary_cases(OpCheck& check);      // math and activations, forward and backward
void add_pow_clamp_cases(OpCheck& check);  // pow, square, clamp, maximum/minimum
void add_logic_cases(OpCheck& check);      // comparisons, logical ops, where, masked_fill
void add_reduce_cases(OpCheck& check);     // sum/mean/amax/amin/argmax/argmin/max/min/norm
void add_nn_cases(OpCheck& check);         // softmax, layer_norm, embedding, losses, dropout
void add_index_cases(OpCheck& check);      // gather, scatter_add, index_select, one_hot
void add_linalg_cases(OpCheck& check);     // matmul, mm, bmm, linear, addmm
void add_conv_pool_cases(OpCheck& check);  // conv1d/conv2d, max/avg pooling, batch_norm
void add_memory_cases(OpCheck& check);     // copies, views, cat, dtype conversion, factories, random
void add_model_cases(OpCheck& check);      // MLP training steps and a causal attention block

}  // namespace rt::op_check
