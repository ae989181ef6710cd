// conv1d/conv2d (stride, padding, dilation, groups, bias), max/avg pooling (padding, dilation,
// ceil_mode, count_include_pad) and batch_norm (training with running statistics, and eval).
#include "cases.h"

namespace rt::op_check {
namespace {

struct Conv {
  const char* variant;
  Shape input, weight;
  Shape stride, padding, dilation;
  int64_t groups;
};

const Conv kConvs[] = {
    {"3x3", {2, 3, 9, 8}, {4, 3, 3, 3}, {1}, {0}, {1}, 1},
    {"stride 2 padding 1", {2, 3, 9, 8}, {5, 3, 3, 3}, {2}, {1}, {1}, 1},
    {"dilation 2, padding (2, 1)", {1, 2, 10, 9}, {3, 2, 3, 3}, {1}, {2, 1}, {2}, 1},
    {"groups 3", {2, 6, 7, 7}, {6, 2, 3, 3}, {1}, {1}, {1}, 3},
    {"depthwise 5x5 stride (2, 1)", {2, 4, 11, 10}, {4, 1, 5, 5}, {2, 1}, {2}, {1}, 4},
    {"1x1", {3, 8, 5, 5}, {16, 8, 1, 1}, {1}, {0}, {1}, 1},
    {"unbatched [C, H, W]", {3, 6, 6}, {2, 3, 3, 3}, {1}, {1}, {1}, 1},
    {"wide (im2col batching)", {4, 16, 20, 20}, {32, 16, 3, 3}, {1}, {1}, {1}, 1},
};

}  // namespace

void add_conv_pool_cases(OpCheck& check) {
  for (const Conv& c : kConvs)
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16}) {
      check.run({.op = "conv2d", .variant = std::string(c.variant) + " bias",
                 .inputs = {randn_t(c.input, dt), randn_t(c.weight, dt) * 0.3, randn_t({c.weight[0]}, dt)}, .grad = {true, true, true},
                 .tol = Tol::Matmul, .fn = one([c](const TensorList& in, Device) {
                   return rt::conv2d(in[0], in[1], in[2], c.stride, c.padding, c.dilation, c.groups);
                 })});
    }
  check.run({.op = "conv2d", .variant = "no bias", .inputs = {randn_t({2, 3, 8, 8}), randn_t({4, 3, 3, 3})}, .grad = {true, true},
             .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::conv2d(in[0], in[1]); })});
  check.run({.op = "conv2d", .variant = "input grad only", .inputs = {randn_t({2, 3, 8, 8}), randn_t({4, 3, 3, 3})}, .grad = {true, false},
             .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::conv2d(in[0], in[1], {}, {2}, {1}); })});
  check.run({.op = "conv2d", .variant = "non-contiguous input", .inputs = {randn_t({2, 8, 8, 3}), randn_t({4, 3, 3, 3})}, .grad = {true, true},
             .tol = Tol::Matmul, .fn = one([](const TensorList& in, Device) { return rt::conv2d(in[0].permute({0, 3, 1, 2}), in[1]); })});
  check.run({.op = "conv1d", .variant = "padding 1 bias", .inputs = {randn_t({2, 3, 10}), randn_t({4, 3, 3}), randn_t({4})},
             .grad = {true, true, true}, .tol = Tol::Matmul,
             .fn = one([](const TensorList& in, Device) { return rt::conv1d(in[0], in[1], in[2], 1, 1); })});
  check.run({.op = "conv1d", .variant = "stride 2 dilation 2 groups 2", .inputs = {randn_t({2, 4, 17}), randn_t({6, 2, 3})},
             .grad = {true, true}, .tol = Tol::Matmul,
             .fn = one([](const TensorList& in, Device) { return rt::conv1d(in[0], in[1], {}, 2, 0, 2, 2); })});

  // Pooling. Ties (small integers) make max_pool2d pick the first maximum on both devices.
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16}) {
    check.run({.op = "max_pool2d", .variant = "2x2", .inputs = {randn_t({2, 3, 8, 9}, dt)}, .grad = {true}, .tol = Tol::Exact,
               .fn = one([](const TensorList& in, Device) { return rt::max_pool2d(in[0], {2}); })});
    check.run({.op = "avg_pool2d", .variant = "2x2", .inputs = {randn_t({2, 3, 8, 9}, dt)}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::avg_pool2d(in[0], {2}); })});
  }
  check.run({.op = "max_pool2d", .variant = "3x3 stride 2 padding 1", .inputs = {randn_t({2, 4, 11, 10})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::max_pool2d(in[0], {3}, {2}, {1}); })});
  check.run({.op = "max_pool2d", .variant = "dilation 2 ceil_mode", .inputs = {randn_t({1, 2, 12, 11})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::max_pool2d(in[0], {3, 2}, {2}, {1}, {2}, true); })});
  check.run({.op = "max_pool2d", .variant = "ties", .inputs = {randint_t(0, 3, {2, 2, 8, 8}).to(kFloat32)}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::max_pool2d(in[0], {3}, {1}); })});
  check.run({.op = "max_pool2d", .variant = "unbatched, non-contiguous", .inputs = {randn_t({8, 9, 3})}, .grad = {true}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::max_pool2d(in[0].permute({2, 0, 1}), {2}); })});
  for (bool include_pad : {true, false})
    check.run({.op = "avg_pool2d", .variant = std::string("3x3 stride 2 padding 1 count_include_pad=") + (include_pad ? "true" : "false"),
               .inputs = {randn_t({2, 3, 9, 10})}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([include_pad](const TensorList& in, Device) { return rt::avg_pool2d(in[0], {3}, {2}, {1}, false, include_pad); })});
  // adaptive_avg_pool2d: uneven windows (7 -> 3 overlaps), identity, global, and upsampling sizes.
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16})
    for (const Shape& o : {Shape{3, 2}, Shape{1, 1}, Shape{7, 5}, Shape{9, 6}})
      check.run({.op = "adaptive_avg_pool2d", .variant = "to " + format_shape(o), .inputs = {randn_t({2, 3, 7, 5}, dt)}, .grad = {true},
                 .tol = Tol::Reduction, .fn = one([o](const TensorList& in, Device) { return rt::adaptive_avg_pool2d(in[0], o); })});
  check.run({.op = "adaptive_avg_pool2d", .variant = "unbatched, non-contiguous", .inputs = {randn_t({8, 9, 3})}, .grad = {true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::adaptive_avg_pool2d(in[0].permute({2, 0, 1}), {4, 4}); })});
  check.run({.op = "avg_pool2d", .variant = "ceil_mode", .inputs = {randn_t({1, 2, 7, 7})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::avg_pool2d(in[0], {2}, {2}, {0}, true); })});

  // batch_norm: training normalises with batch statistics and updates the running ones in place.
  for (ScalarType dt : {kFloat32, kFloat16, kBFloat16})
    check.run({.op = "batch_norm", .variant = "training [N, C, H, W]",
               .inputs = {randn_t({4, 3, 5, 6}, dt) * 2 + 1, randn_t({3}, dt), randn_t({3}, dt)}, .grad = {true, true, true},
               .tol = Tol::Reduction, .fn = [](const TensorList& in, Device d) {
                 const TensorOptions o = TensorOptions(in[0].dtype()).with_device(d);
                 Tensor rm = rt::zeros({3}, o), rv = rt::ones({3}, o);
                 Tensor y = rt::batch_norm(in[0], rm, rv, in[1], in[2], true, 0.1, 1e-5);
                 return TensorList{y, rm, rv};
               }});
  check.run({.op = "batch_norm", .variant = "training [8, 4, 32, 32] (8192 values per channel)",
             .inputs = {randn_t({8, 4, 32, 32}) * 2 + 1, randn_t({4}), randn_t({4})}, .grad = {true, true, true},
             .tol = Tol::Reduction, .fn = [](const TensorList& in, Device d) {
               Tensor rm = rt::zeros({4}, TensorOptions().with_device(d)), rv = rt::ones({4}, TensorOptions().with_device(d));
               return TensorList{rt::batch_norm(in[0], rm, rv, in[1], in[2], true, 0.1, 1e-5), rm, rv};
             }});
  check.run({.op = "batch_norm", .variant = "training [N, C] no affine", .inputs = {randn_t({64, 7})}, .grad = {true},
             .tol = Tol::Reduction, .fn = [](const TensorList& in, Device d) {
               Tensor rm = rt::zeros({7}, TensorOptions().with_device(d)), rv = rt::ones({7}, TensorOptions().with_device(d));
               return TensorList{rt::batch_norm(in[0], rm, rv, {}, {}, true, 0.3), rm, rv};
             }});
  check.run({.op = "batch_norm", .variant = "eval", .inputs = {randn_t({4, 3, 5}), randn_t({3}), uniform_t({3}, 0.5, 2), randn_t({3}), randn_t({3})},
             .grad = {true, false, false, true, true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::batch_norm(in[0], in[1], in[2], in[3], in[4], false); })});
}

}  // namespace rt::op_check
