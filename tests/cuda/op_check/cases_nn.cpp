// softmax/log_softmax, layer_norm, embedding, cross_entropy, nll_loss, dropout.
#include <cmath>
#include <string>
#include <utility>

#include "cases.h"

namespace rt::op_check {
namespace {

// Class indices in [0, classes) with about a quarter replaced by `ignore_index`.
Tensor targets(int64_t classes, const Shape& s, int64_t ignore_index) {
  return rt::where(mask_t(s, 0.25), rt::full({}, ignore_index, kInt64), randint_t(0, classes, s));
}

void softmaxes(OpCheck& check) {
  for (bool log : {false, true}) {
    const char* name = log ? "log_softmax" : "softmax";
    auto f = [log](int64_t d) { return one([log, d](const TensorList& in, Device) { return log ? rt::log_softmax(in[0], d) : rt::softmax(in[0], d); }); };
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
      check.run({.op = name, .variant = "dim=-1", .inputs = {randn_t({4, 6, 10}, dt) * 3}, .grad = {true}, .tol = Tol::Reduction, .fn = f(-1)});
      check.run({.op = name, .variant = "dim=1", .inputs = {randn_t({4, 6, 10}, dt) * 3}, .grad = {true}, .tol = Tol::Reduction, .fn = f(1)});
    }
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16})
      check.run({.op = name, .variant = "dim=-1 long rows " + std::string(dtype_name(dt)), .inputs = {randn_t({8, 5000}, dt) * 4},
                 .grad = {true}, .tol = Tol::Reduction, .fn = f(-1)});
    // Rows in registers (kernels/cuda/row_plan.h) when 16-byte aligned and longer than 1024, one plan per
    // shape (packs per thread x threads, forward / backward): 2x160 / 2x160 ([3, 1028] f32), 4x256 / 4x256
    // (the benchmark's [.., 4096] f32), 8x512 / 4x1024 ([2, 16384] f32, the widest unsplit forward),
    // 1x160 with idle threads ([3, 1032] f16 and bf16), 2x256 / 2x256 ([3, 4096] f16), 4x256 / 2x512
    // ([3, 2048] f64); forwards with half the packs in shared memory (registers + shared x threads,
    // backward streaming): 8+8x512 ([3, 32768] f32, the benchmark's), 8+8x288 ([2, 16388] f32, shared half
    // partly used), 4+4x512 ([2, 32768] f16), 4+4x320 ([2, 20000] bf16), 4+4x512 and 4+4x288 ([2, 8192],
    // [2, 4100] f64); whole -inf rows and -inf entries, also through shared memory ([3, 32768]).
    // Rows that are not whole packs ([4, 1030] f32) or start 4 bytes off stream through the block-per-row kernel.
    for (auto [shape, dt] : {std::pair<Shape, ScalarType>{{3, 1028}, kFloat32}, {{4, 4096}, kFloat32}, {{2, 16384}, kFloat32},
                             {{3, 32768}, kFloat32}, {{2, 16388}, kFloat32}, {{3, 1032}, kFloat16}, {{3, 1032}, kBFloat16},
                             {{3, 4096}, kFloat16}, {{2, 32768}, kFloat16}, {{2, 20000}, kBFloat16}, {{3, 2048}, kFloat64},
                             {{2, 8192}, kFloat64}, {{2, 4100}, kFloat64}, {{4, 1030}, kFloat32}})
      check.run({.op = name, .variant = "dim=-1 rows " + format_shape(shape) + " " + std::string(dtype_name(dt)),
                 .inputs = {randn_t(shape, dt) * 4}, .grad = {true}, .tol = Tol::Reduction, .fn = f(-1)});
    // Short rows in registers, a warp each (plan_row_per_warp; 4 warps a block, so row counts that are not
    // a multiple of 4 leave warps without a row), the same packs per lane forward and backward: 1 ([5, 4]
    // f32, one pack for 32 lanes; [5, 128] f32), 2 ([7, 132] f32, [3, 264] f16), 4 ([6, 1024] f16,
    // [3, 520] bf16, [3, 256] f64), 8 ([3, 1024] f32, [3, 258] f64). [3, 1000] f64 is more than a warp holds
    // and gets a block (2 packs x 256 threads); a row 4 bytes off streams.
    for (auto [shape, dt] : {std::pair<Shape, ScalarType>{{5, 4}, kFloat32}, {{5, 128}, kFloat32}, {{7, 132}, kFloat32},
                             {{3, 264}, kFloat16}, {{6, 1024}, kFloat16}, {{3, 520}, kBFloat16}, {{3, 256}, kFloat64},
                             {{3, 1024}, kFloat32}, {{3, 258}, kFloat64}, {{3, 1000}, kFloat64}})
      check.run({.op = name, .variant = "dim=-1 warp rows " + format_shape(shape) + " " + std::string(dtype_name(dt)),
                 .inputs = {randn_t(shape, dt) * 4}, .grad = {true}, .tol = Tol::Reduction, .fn = f(-1)});
    check.run({.op = name, .variant = "dim=-1 warp rows [4, 512] at a 4-byte offset", .inputs = {randn_t({4 * 512 + 1})},
               .grad = {true}, .tol = Tol::Reduction, .fn = one([log](const TensorList& in, Device) {
                 Tensor x = in[0].narrow(0, 1, 4 * 512).view({4, 512});
                 return log ? rt::log_softmax(x, -1) : rt::softmax(x, -1);
               })});
    for (const Shape& shape : {Shape{5, 128}, Shape{4, 2048}, Shape{3, 32768}})
      check.run({.op = name, .variant = "dim=-1 rows " + format_shape(shape) + " -inf entries, row 1 all -inf (NaN)",
                 .inputs = {randn_t(shape), rt::logical_or(mask_t(shape, 0.5), rt::eq(rt::arange(shape[0]).view({shape[0], 1}),
                                                                                      rt::full({}, 1, kInt64)))},
                 .grad = {true, false}, .tol = Tol::Reduction, .fn = one([log](const TensorList& in, Device) {
                   Tensor x = rt::masked_fill(in[0], in[1], -INFINITY);
                   return log ? rt::log_softmax(x, -1) : rt::softmax(x, -1);
                 })});
    check.run({.op = name, .variant = "dim=-1 rows [4, 2048] at a 4-byte offset", .inputs = {randn_t({4 * 2048 + 1})}, .grad = {true},
               .tol = Tol::Reduction, .fn = one([log](const TensorList& in, Device) {
                 Tensor x = in[0].narrow(0, 1, 4 * 2048).view({4, 2048});
                 return log ? rt::log_softmax(x, -1) : rt::softmax(x, -1);
               })});
    check.run({.op = name, .variant = "dim=0", .inputs = {randn_t({37, 3})}, .grad = {true}, .tol = Tol::Reduction, .fn = f(0)});
    check.run({.op = name, .variant = "dim=-1 large logits", .inputs = {randn_t({5, 9}) * 200}, .grad = {true}, .tol = Tol::Reduction, .fn = f(-1)});
    check.run({.op = name, .variant = "dim=-1 -inf entries", .inputs = {randn_t({6, 6}), mask_t({6, 6}, 0.3)}, .grad = {true, false},
               .tol = Tol::Reduction, .fn = one([log](const TensorList& in, Device) {
                 Tensor x = rt::masked_fill(in[0], in[1], -INFINITY);
                 return log ? rt::log_softmax(x, -1) : rt::softmax(x, -1);
               })});
    check.run({.op = name, .variant = "dim=-1 transposed input", .inputs = {randn_t({7, 5})}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([log](const TensorList& in, Device) { return log ? rt::log_softmax(in[0].t(), -1) : rt::softmax(in[0].t(), -1); })});
  }
}

void layer_norms(OpCheck& check) {
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
    check.run({.op = "layer_norm", .variant = "weight+bias", .inputs = {randn_t({4, 7, 32}, dt) * 2 + 1, randn_t({32}, dt), randn_t({32}, dt)},
               .grad = {true, true, true}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {32}, in[1], in[2]); })});
    check.run({.op = "layer_norm", .variant = "no affine", .inputs = {randn_t({4, 7, 32}, dt)}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {32}); })});
  }
  check.run({.op = "layer_norm", .variant = "weight only, 2-D shape", .inputs = {randn_t({3, 4, 5, 6}), randn_t({5, 6})}, .grad = {true, true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {5, 6}, in[1]); })});
  check.run({.op = "layer_norm", .variant = "bias only, eps=1e-3", .inputs = {randn_t({10, 16}), randn_t({16})}, .grad = {true, true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {16}, {}, in[1], 1e-3); })});
  // More row chunks (256 rows each) than a grid's y dimension holds (65535): blocks take several chunks.
  check.run({.op = "layer_norm", .variant = "16.8M rows (parameter grads over > 65535 chunks)",
             .inputs = {randn_t({16800000, 2}), randn_t({2}), randn_t({2})}, .grad = {true, true, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {2}, in[1], in[2]); })});
  check.run({.op = "layer_norm", .variant = "empty batch (parameter grads are zero)", .inputs = {randn_t({0, 8}), randn_t({8}), randn_t({8})},
             .grad = {true, true, true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {8}, in[1], in[2]); })});
  check.run({.op = "layer_norm", .variant = "wide rows bfloat16", .inputs = {randn_t({6, 4096}, kBFloat16), randn_t({4096}, kBFloat16)},
             .grad = {true, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {4096}, in[1]); })});
  check.run({.op = "layer_norm", .variant = "wide rows", .inputs = {randn_t({6, 4096}), randn_t({4096}), randn_t({4096})}, .grad = {true, true, true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {4096}, in[1], in[2]); })});
  // layer_norm with weight and bias over rows of `shape` (their last dim), named "<kind> rows <shape> <dtype>".
  auto affine_rows = [&check](const std::string& kind, const Shape& shape, ScalarType dt) {
    const int64_t D = shape.back();
    check.run({.op = "layer_norm", .variant = kind + " rows " + format_shape(shape) + " " + std::string(dtype_name(dt)),
               .inputs = {randn_t(shape, dt) * 2 + 1, randn_t({D}, dt), randn_t({D}, dt)}, .grad = {true, true, true},
               .tol = Tol::Reduction,
               .fn = one([D](const TensorList& in, Device) { return rt::layer_norm(in[0], {D}, in[1], in[2]); })});
  };
  // Short rows, a warp each (most cases above with D = 32, 24 or 16 take this path too; D = 30 and 2 stream),
  // packs per lane forward and grad_input: 8 ([5, 7, 768] f32, 35 rows), 4 ([3, 512] f32, [6, 1024] f16),
  // 2 ([3, 264] bf16); a weight 4 bytes off streams.
  for (auto [shape, dt] : {std::pair<Shape, ScalarType>{{5, 7, 768}, kFloat32}, {{3, 512}, kFloat32}, {{6, 1024}, kFloat16},
                           {{3, 264}, kBFloat16}})
    affine_rows("warp", shape, dt);
  check.run({.op = "layer_norm", .variant = "warp rows [5, 768] weight at a 4-byte offset", .inputs = {randn_t({5, 768}), randn_t({769})},
             .grad = {true, true}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
               return rt::layer_norm(in[0], {768}, in[1].narrow(0, 1, 768));
             })});
  // Long rows in registers, a block each, plans as softmax's (forward / grad_input): 4x160 / 4x160
  // ([5, 2052] f32), 8x1024 / streaming ([2, 32768] f32), 1x160 with idle threads ([3, 1032] f16 and
  // bf16), 2x256 / 2x256 ([3, 4096] f16), 4x256 / 2x512 ([4, 8192] f16, [2, 8192] bf16, [3, 2048] f64);
  // bias only, no affine. Rows that are not whole packs ([4, 1030] f32), too long for registers
  // ([2, 32776] f32), or a weight 4 bytes off stream instead.
  for (auto [shape, dt] : {std::pair<Shape, ScalarType>{{5, 2052}, kFloat32}, {{2, 32768}, kFloat32}, {{3, 1032}, kFloat16},
                           {{3, 1032}, kBFloat16}, {{3, 4096}, kFloat16}, {{4, 8192}, kFloat16}, {{2, 8192}, kBFloat16},
                           {{3, 2048}, kFloat64}, {{4, 1030}, kFloat32}, {{2, 32776}, kFloat32}})
    affine_rows("block", shape, dt);
  check.run({.op = "layer_norm", .variant = "rows [4, 3072] bias only", .inputs = {randn_t({4, 3072}), randn_t({3072})},
             .grad = {true, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {3072}, {}, in[1]); })});
  check.run({.op = "layer_norm", .variant = "rows [3, 2048] no affine", .inputs = {randn_t({3, 2048})}, .grad = {true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {2048}); })});
  check.run({.op = "layer_norm", .variant = "rows [3, 2048] weight at a 4-byte offset", .inputs = {randn_t({3, 2048}), randn_t({2049})},
             .grad = {true, true}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
               return rt::layer_norm(in[0], {2048}, in[1].narrow(0, 1, 2048));
             })});
  check.run({.op = "layer_norm", .variant = "many rows (weight grad reduction)", .inputs = {randn_t({3000, 24}), randn_t({24}), randn_t({24})},
             .grad = {true, true, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::layer_norm(in[0], {24}, in[1], in[2]); })});
}

void embeddings(OpCheck& check) {
  for (ScalarType dt : kFloatTypes) {
    check.run({.op = "embedding", .inputs = {randn_t({11, 8}, dt), randint_t(0, 11, {4, 9})}, .grad = {true, false}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
    check.run({.op = "embedding", .variant = "padding_idx=3", .inputs = {randn_t({11, 8}, dt), randint_t(0, 11, {4, 9})}, .grad = {true, false},
               .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1], 3); })});
  }
  // Rows that are not a multiple of 16 bytes (the narrower copy paths), and an empty sequence.
  check.run({.op = "embedding", .variant = "D=3 float32", .inputs = {randn_t({9, 3}), randint_t(0, 9, {4, 5})}, .grad = {true, false},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
  check.run({.op = "embedding", .variant = "D=5 float16", .inputs = {randn_t({9, 5}, kFloat16), randint_t(0, 9, {4, 5})},
             .grad = {true, false}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
  check.run({.op = "embedding", .variant = "empty sequence [4, 0]", .inputs = {randn_t({9, 8}), randint_t(0, 9, {4, 0})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
  // Many repeats of few rows: the backward's scatter-add accumulates hundreds of rows into each.
  check.run({.op = "embedding", .variant = "heavy repeats", .inputs = {randn_t({5, 64}), randint_t(0, 5, {2000})}, .grad = {true, false},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
  check.run({.op = "embedding", .variant = "0-dim index", .inputs = {randn_t({5, 4}), randint_t(0, 5, {})}, .grad = {true, false},
             .fn = one([](const TensorList& in, Device) { return rt::embedding(in[0], in[1]); })});
}

void losses(OpCheck& check) {
  for (const char* red : {"mean", "sum", "none"}) {
    const std::string r = std::string("reduction=") + red;
    for (ScalarType dt : kFloatTypes)
      check.run({.op = "cross_entropy", .variant = r, .inputs = {randn_t({16, 10}, dt) * 2, randint_t(0, 10, {16})}, .grad = {true, false},
                 .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], {}, -100, red); })});
    check.run({.op = "cross_entropy", .variant = r + " ignore_index=1", .inputs = {randn_t({16, 10}), targets(10, {16}, 1)}, .grad = {true, false},
               .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], {}, 1, red); })});
    check.run({.op = "cross_entropy", .variant = r + " label_smoothing=0.1", .inputs = {randn_t({16, 10}), targets(10, {16}, -100)},
               .grad = {true, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], {}, -100, red, 0.1); })});
    check.run({.op = "cross_entropy", .variant = r + " weight", .inputs = {randn_t({16, 10}), targets(10, {16}, -100), uniform_t({10}, 0.2, 2)},
               .grad = {true, false, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], in[2], -100, red); })});
    check.run({.op = "cross_entropy", .variant = r + " weight label_smoothing=0.2", .inputs = {randn_t({12, 7}), randint_t(0, 7, {12}), uniform_t({7}, 0.2, 2)},
               .grad = {true, false, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], in[2], -100, red, 0.2); })});
    check.run({.op = "cross_entropy", .variant = r + " [N,C,d1,d2]", .inputs = {randn_t({3, 5, 4, 2}), targets(5, {3, 4, 2}, -100)},
               .grad = {true, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], {}, -100, red); })});
    check.run({.op = "cross_entropy", .variant = r + " 3000 samples, 1500 classes", .inputs = {randn_t({3000, 1500}) * 2, randint_t(0, 1500, {3000})},
               .grad = {true, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1], {}, -100, red); })});
    check.run({.op = "nll_loss", .variant = r, .inputs = {randn_t({16, 10}), targets(10, {16}, -100)}, .grad = {true, false},
               .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) { return rt::nll_loss(rt::log_softmax(in[0], 1), in[1], {}, -100, red); })});
    check.run({.op = "nll_loss", .variant = r + " weight ignore_index=2", .inputs = {randn_t({16, 6}), targets(6, {16}, 2), uniform_t({6}, 0.5, 1.5)},
               .grad = {true, false, false}, .tol = Tol::Reduction,
               .fn = one([=](const TensorList& in, Device) { return rt::nll_loss(in[0], in[1], in[2], 2, red); })});
  }
  for (const char* red : {"mean", "sum", "none"}) {
    const std::string r = std::string("reduction=") + red;
    for (ScalarType dt : kFloatTypes) {
      check.run({.op = "mse_loss", .variant = r, .inputs = {randn_t({8, 9}, dt), randn_t({8, 9}, dt)}, .grad = {true, true},
                 .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) { return rt::mse_loss(in[0], in[1], red); })});
      check.run({.op = "binary_cross_entropy_with_logits", .variant = r, .inputs = {randn_t({8, 9}, dt) * 4, uniform_t({8, 9}, 0, 1, dt)},
                 .grad = {true, true}, .tol = Tol::Reduction,
                 .fn = one([=](const TensorList& in, Device) { return rt::binary_cross_entropy_with_logits(in[0], in[1], {}, red); })});
    }
    check.run({.op = "mse_loss", .variant = r + " broadcast target", .inputs = {randn_t({8, 9}), randn_t({9})}, .grad = {true, true},
               .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) { return rt::mse_loss(in[0], in[1], red); })});
    check.run({.op = "binary_cross_entropy_with_logits", .variant = r + " weight pos_weight, large logits",
               .inputs = {randn_t({8, 9}) * 30, uniform_t({8, 9}, 0, 1), uniform_t({9}, 0.2, 2), uniform_t({9}, 0.5, 3)},
               .grad = {true, true, true, true}, .tol = Tol::Reduction, .fn = one([=](const TensorList& in, Device) {
                 return rt::binary_cross_entropy_with_logits(in[0], in[1], in[2], red, in[3]);
               })});
  }
  check.run({.op = "cross_entropy", .variant = "many classes", .inputs = {randn_t({64, 5003}), randint_t(0, 5003, {64})}, .grad = {true, false},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1]); })});
  check.run({.op = "cross_entropy", .variant = "all targets ignored (NaN mean)", .inputs = {randn_t({4, 3}), rt::full({4}, int64_t(-100), kInt64)},
             .grad = {true, false}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::cross_entropy(in[0], in[1]); })});
}

void dropouts(OpCheck& check) {
  // Same seed on both devices: the same mask, so results match exactly where the scale 1 / (1 - p)
  // is a power of 2 (any other mask would differ by whole values anyway).
  for (double p : {0.5, 0.75, 0.25})
    for (ScalarType dt : kFloatTypes)
      check.run({.op = "dropout", .variant = "p=" + std::to_string(p).substr(0, 4), .inputs = {randn_t({37, 29}, dt)}, .grad = {true},
                 .tol = p == 0.25 ? Tol::Pointwise : Tol::Exact, .fn = one([p](const TensorList& in, Device) { return rt::dropout(in[0], p); })});
  check.run({.op = "dropout", .variant = "p=0.1 large", .inputs = {randn_t({1000, 333})}, .grad = {true}, .tol = Tol::Pointwise,
             .fn = one([](const TensorList& in, Device) { return rt::dropout(in[0], 0.1); })});
  check.run({.op = "dropout", .variant = "transposed input", .inputs = {randn_t({16, 12})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::dropout(in[0].t(), 0.5); })});
  check.run({.op = "dropout", .variant = "two draws in a row", .inputs = {randn_t({64})}, .tol = Tol::Exact,
             .fn = [](const TensorList& in, Device) { return TensorList{rt::dropout(in[0], 0.5), rt::dropout(in[0], 0.5)}; }});
  check.run({.op = "dropout", .variant = "eval", .inputs = {randn_t({9, 9})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::dropout(in[0], 0.5, false); })});
}

void attention(OpCheck& check) {
  for (ScalarType dt : kFloatTypes) {
    check.run({.op = "scaled_dot_product_attention", .variant = "causal",
               .inputs = {randn_t({2, 3, 7, 8}, dt), randn_t({2, 3, 7, 8}, dt), randn_t({2, 3, 7, 8}, dt)}, .grad = {true, true, true},
               .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
                 return rt::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true);
               })});
  }
  check.run({.op = "scaled_dot_product_attention", .variant = "bool mask, L != S, scale 0.3",
             .inputs = {randn_t({2, 5, 8}), randn_t({2, 9, 8}), randn_t({2, 9, 4}), mask_t({5, 9}, 0.7)}, .grad = {true, true, true, false},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
               // keep one attended key per row so that no row is all -inf
               Tensor mask = rt::logical_or(in[3], rt::arange(9).lt(scalar_to_tensor(1)).to(in[3].device()));
               return rt::scaled_dot_product_attention(in[0], in[1], in[2], mask, 0.0, false, 0.3);
             })});
  check.run({.op = "scaled_dot_product_attention", .variant = "additive float mask",
             .inputs = {randn_t({4, 6, 8}), randn_t({4, 6, 8}), randn_t({4, 6, 8}), randn_t({6, 6})}, .grad = {true, true, true, true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) {
               return rt::scaled_dot_product_attention(in[0], in[1], in[2], in[3]);
             })});
}

}  // namespace

void add_nn_cases(OpCheck& check) {
  softmaxes(check);
  layer_norms(check);
  embeddings(check);
  losses(check);
  dropouts(check);
  attention(check);
}

}  // namespace rt::op_check
