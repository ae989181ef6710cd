// conv1d, conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d: float64 naive references,
// float32/half checks, gradcheck over stride/padding/dilation/groups, error messages.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::TensorList;
using rt::testing::random;
using rt::testing::require_close;
using rt::testing::values;

namespace {

struct Conv {
  int64_t sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1, groups = 1;
};

// Naive float64 conv2d over a batched [N, C, H, W] input.
Tensor ref_conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const Conv& c) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t Co = w.size(0), Cg = w.size(1), kH = w.size(2), kW = w.size(3), Cog = Co / c.groups;
  const int64_t oH = (H + 2 * c.pH - c.dH * (kH - 1) - 1) / c.sH + 1, oW = (W + 2 * c.pW - c.dW * (kW - 1) - 1) / c.sW + 1;
  const auto vx = values(x), vw = values(w);
  const auto vb = b.defined() ? values(b) : std::vector<double>(size_t(Co), 0.0);
  std::vector<double> out(size_t(N * Co * oH * oW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t oh = 0; oh < oH; ++oh)
        for (int64_t ow = 0; ow < oW; ++ow) {
          double s = vb[size_t(co)];
          for (int64_t ci = 0; ci < Cg; ++ci) {
            const int64_t cin = (co / Cog) * Cg + ci;
            for (int64_t i = 0; i < kH; ++i)
              for (int64_t j = 0; j < kW; ++j) {
                const int64_t ih = oh * c.sH - c.pH + i * c.dH, iw = ow * c.sW - c.pW + j * c.dW;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += vx[size_t(((n * C + cin) * H + ih) * W + iw)] * vw[size_t(((co * Cg + ci) * kH + i) * kW + j)];
              }
          }
          out[size_t(((n * Co + co) * oH + oh) * oW + ow)] = s;
        }
  return rt::from_vector(out, Shape{N, Co, oH, oW});
}

struct Pool {
  int64_t kH, kW, sH, sW, pH = 0, pW = 0, dH = 1, dW = 1;
  bool ceil_mode = false, count_include_pad = true;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  const double num = double(in + 2 * p - d * (k - 1) - 1) / double(s);
  int64_t out = int64_t(ceil_mode ? std::ceil(num) : std::floor(num)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Naive float64 pooling over [P, H, W] planes: kind 0 = max, 1 = avg.
Tensor ref_pool(const Tensor& x, const Pool& p, int kind) {
  const int64_t H = x.size(-2), W = x.size(-1), P = x.numel() / (H * W);
  const int64_t oH = pool_out(H, p.kH, p.pH, p.sH, p.dH, p.ceil_mode), oW = pool_out(W, p.kW, p.pW, p.sW, p.dW, p.ceil_mode);
  const auto v = values(x);
  std::vector<double> out;
  for (int64_t q = 0; q < P; ++q)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t count = 0, padded = 0;
        for (int64_t i = 0; i < p.kH; ++i)
          for (int64_t j = 0; j < p.kW; ++j) {
            const int64_t ih = oh * p.sH - p.pH + i * p.dH, iw = ow * p.sW - p.pW + j * p.dW;
            if (ih < H + p.pH && iw < W + p.pW) ++padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double e = v[size_t((q * H + ih) * W + iw)];
            best = std::max(best, e);
            sum += e;
            ++count;
          }
        out.push_back(kind == 0 ? best : sum / double(p.count_include_pad ? padded : count));
      }
  Shape shape(x.sizes().begin(), x.sizes().end() - 2);
  shape.push_back(oH);
  shape.push_back(oW);
  return rt::from_vector(out, shape);
}

Tensor ref_adaptive(const Tensor& x, int64_t oH, int64_t oW) {
  const int64_t H = x.size(-2), W = x.size(-1), P = x.numel() / (H * W);
  const auto v = values(x);
  std::vector<double> out;
  for (int64_t q = 0; q < P; ++q)
    for (int64_t oh = 0; oh < oH; ++oh)
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t h0 = int64_t(std::floor(double(oh * H) / oH)), h1 = int64_t(std::ceil(double((oh + 1) * H) / oH));
        const int64_t w0 = int64_t(std::floor(double(ow * W) / oW)), w1 = int64_t(std::ceil(double((ow + 1) * W) / oW));
        double s = 0;
        for (int64_t i = h0; i < h1; ++i)
          for (int64_t j = w0; j < w1; ++j) s += v[size_t((q * H + i) * W + j)];
        out.push_back(s / double((h1 - h0) * (w1 - w0)));
      }
  Shape shape(x.sizes().begin(), x.sizes().end() - 2);
  shape.push_back(oH);
  shape.push_back(oW);
  return rt::from_vector(out, shape);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const rt::Error& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace

TEST_CASE("conv2d: stride, padding, dilation and groups match the float64 reference") {
  struct Case {
    Shape x, w;
    Conv c;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {}, true},
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {2, 2, 1, 1, 1, 1, 1}, true},
      {{1, 2, 9, 8}, {3, 2, 3, 2}, {2, 1, 2, 0, 2, 3, 1}, false},
      {{3, 4, 6, 6}, {6, 2, 3, 3}, {1, 1, 1, 1, 1, 1, 2}, true},
      {{2, 4, 5, 5}, {4, 1, 3, 3}, {1, 2, 1, 0, 1, 1, 4}, true},  // depthwise
      {{2, 5, 4, 3}, {7, 5, 1, 1}, {}, true},                    // pointwise: no im2col
      {{2, 4, 6, 6}, {6, 2, 1, 1}, {2, 2, 0, 0, 1, 1, 2}, false},
      {{5, 3, 16, 16}, {8, 3, 5, 5}, {1, 1, 2, 2, 1, 1, 1}, true},  // enough images to run in parallel
  };
  uint64_t seed = 1;
  for (const auto& k : cases) {
    INFO("input " << rt::format_shape(k.x) << " weight " << rt::format_shape(k.w));
    Tensor x = random(k.x, rt::kFloat64, -1, 1, seed++), w = random(k.w, rt::kFloat64, -1, 1, seed++);
    Tensor b = k.bias ? random({k.w[0]}, rt::kFloat64, -1, 1, seed++) : Tensor();
    const Shape st{k.c.sH, k.c.sW}, pad{k.c.pH, k.c.pW}, dil{k.c.dH, k.c.dW};
    Tensor ref = ref_conv2d(x, w, b, k.c);
    require_close(rt::conv2d(x, w, b, st, pad, dil, k.c.groups), ref, 1e-12, 1e-12);
    require_close(rt::conv2d(x.to(rt::kFloat32), w.to(rt::kFloat32), b.defined() ? b.to(rt::kFloat32) : Tensor(), st, pad,
                             dil, k.c.groups),
                  ref, 1e-5, 1e-5);
  }
}

TEST_CASE("conv2d: unbatched input, strided input and half types") {
  Tensor x = random({3, 6, 5}, rt::kFloat64, -1, 1, 20), w = random({2, 3, 3, 3}, rt::kFloat64, -1, 1, 21);
  Tensor out = rt::conv2d(x, w, {}, {1}, {1});
  CHECK(out.sizes() == Shape{2, 6, 5});
  require_close(out, ref_conv2d(x.unsqueeze(0), w, {}, {1, 1, 1, 1, 1, 1, 1}).squeeze(0), 1e-12, 1e-12);
  Tensor xt = random({1, 3, 5, 6}, rt::kFloat64, -1, 1, 22).transpose(2, 3);  // non-contiguous
  require_close(rt::conv2d(xt, w), ref_conv2d(xt.contiguous(), w, {}, {}), 1e-12, 1e-12);
  for (auto dt : {rt::kFloat16, rt::kBFloat16}) {
    Tensor h = rt::conv2d(x.to(dt), w.to(dt), {}, {1}, {1});
    CHECK(h.dtype() == dt);
    require_close(h, ref_conv2d(x.to(dt).unsqueeze(0), w.to(dt), {}, {1, 1, 1, 1, 1, 1, 1}).squeeze(0), 3e-2, 3e-2);
  }
}

TEST_CASE("conv1d matches conv2d of height 1 and the reference") {
  Tensor x = random({2, 4, 11}, rt::kFloat64, -1, 1, 30), w = random({6, 2, 3}, rt::kFloat64, -1, 1, 31);
  Tensor b = random({6}, rt::kFloat64, -1, 1, 32);
  Tensor out = rt::conv1d(x, w, b, 2, 1, 2, 2);
  Tensor ref = ref_conv2d(x.unsqueeze(2), w.unsqueeze(2), b, {1, 2, 0, 1, 1, 2, 2}).squeeze(2);
  CHECK(out.sizes() == Shape{2, 6, 5});
  require_close(out, ref, 1e-12, 1e-12);
  Tensor single = rt::conv1d(x.select(0, 1), w, b, 2, 1, 2, 2);
  require_close(single, ref.select(0, 1), 1e-12, 1e-12);
}

TEST_CASE("conv2d: backward over many images equals the sum of per-image gradients") {
  // 10 images of 16x64x64 with a 3x3 kernel exceed one weight-gradient chunk: several chunks.
  Tensor x = random({10, 16, 64, 64}, rt::kFloat64, -1, 1, 40);
  Tensor w = random({4, 16, 3, 3}, rt::kFloat64, -1, 1, 41).requires_grad_();
  Tensor b = random({4}, rt::kFloat64, -1, 1, 42).requires_grad_();
  rt::conv2d(x, w, b, {1}, {1}).sum().backward();
  Tensor gw = w.grad().clone(), gb = b.grad().clone();
  Tensor sum_w = rt::zeros(w.sizes(), rt::kFloat64);
  for (int64_t n = 0; n < 10; ++n) {
    w.set_grad({});
    rt::conv2d(x.select(0, n), w, b, {1}, {1}).sum().backward();
    sum_w = sum_w + w.grad();
  }
  require_close(gw, sum_w, 1e-10, 1e-10);
  require_close(gb, rt::full({4}, 10.0 * 64 * 64, rt::kFloat64), 1e-12, 0);
}

TEST_CASE("conv2d: forward and backward do not depend on the thread count") {
  const int saved = omp_get_max_threads();
  Tensor x = random({6, 4, 20, 20}, rt::kFloat32, -1, 1, 50).requires_grad_();
  Tensor w = random({8, 2, 3, 3}, rt::kFloat32, -1, 1, 51).requires_grad_();
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    x.set_grad({});
    w.set_grad({});
    Tensor y = rt::conv2d(x, w, {}, {2}, {1}, {1}, 2);
    (y * y).sum().backward();
    return TensorList{y, x.grad(), w.grad()};
  };
  TensorList one = run(1), many = run(std::max(2, saved));
  omp_set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) require_close(many[i], one[i], 0, 0);
}

TEST_CASE("pooling matches the float64 references") {
  struct Case {
    Shape x;
    Pool p;
  };
  const std::vector<Case> cases = {
      {{2, 3, 6, 6}, {2, 2, 2, 2}},
      {{1, 2, 7, 5}, {3, 3, 2, 2, 1, 1}},
      {{1, 2, 5, 5}, {2, 2, 2, 2, 0, 0, 1, 1, true}},
      {{1, 1, 5, 5}, {3, 3, 3, 3, 1, 1, 1, 1, true}},
      {{2, 2, 6, 7}, {3, 2, 2, 1, 1, 1, 1, 1, true, false}},
      {{2, 2, 9, 8}, {3, 3, 1, 2, 1, 0, 2, 2}},  // dilation (max pool only)
      {{3, 8, 8}, {3, 3, 1, 1, 1, 1}},            // unbatched, overlapping windows
  };
  uint64_t seed = 60;
  for (const auto& c : cases) {
    INFO("input " << rt::format_shape(c.x) << " kernel " << c.p.kH << "x" << c.p.kW << " ceil " << c.p.ceil_mode);
    Tensor x = random(c.x, rt::kFloat64, -1, 1, seed++);
    const Shape k{c.p.kH, c.p.kW}, s{c.p.sH, c.p.sW}, pad{c.p.pH, c.p.pW}, d{c.p.dH, c.p.dW};
    require_close(rt::max_pool2d(x, k, s, pad, d, c.p.ceil_mode), ref_pool(x, c.p, 0), 1e-12, 1e-12);
    require_close(rt::max_pool2d(x.to(rt::kFloat32), k, s, pad, d, c.p.ceil_mode), ref_pool(x, c.p, 0), 1e-6, 1e-6);
    if (c.p.dH == 1 && c.p.dW == 1) {
      require_close(rt::avg_pool2d(x, k, s, pad, c.p.ceil_mode, c.p.count_include_pad), ref_pool(x, c.p, 1), 1e-12, 1e-12);
      require_close(rt::avg_pool2d(x.to(rt::kFloat32), k, s, pad, c.p.ceil_mode, c.p.count_include_pad), ref_pool(x, c.p, 1),
                    1e-5, 1e-6);
    }
  }
  // PyTorch's output sizes: ceil_mode drops a last window that would start in the right padding.
  CHECK(rt::max_pool2d(rt::zeros({1, 1, 5, 5}), {3}, {3}, {1}, {1}, true).sizes() == Shape{1, 1, 2, 2});
  CHECK(rt::max_pool2d(rt::zeros({1, 1, 5, 5}), {2}, {2}, {0}, {1}, true).sizes() == Shape{1, 1, 3, 3});
  CHECK(rt::max_pool2d(rt::zeros({1, 1, 5, 5}), {2}).sizes() == Shape{1, 1, 2, 2});
  Tensor big = random({4, 16, 32, 32}, rt::kFloat32, -1, 1, 70);  // parallel over planes
  require_close(rt::max_pool2d(big, {2}), ref_pool(big, {2, 2, 2, 2}, 0), 1e-6, 1e-6);
  require_close(rt::adaptive_avg_pool2d(big, {5, 3}), ref_adaptive(big, 5, 3), 1e-5, 1e-6);
}

TEST_CASE("adaptive_avg_pool2d: uneven bins, global pooling, half types") {
  Tensor x = random({2, 3, 5, 7}, rt::kFloat64, -1, 1, 80);
  require_close(rt::adaptive_avg_pool2d(x, {3, 4}), ref_adaptive(x, 3, 4), 1e-12, 1e-12);
  require_close(rt::adaptive_avg_pool2d(x, {1}), x.sum({2, 3}, true) * (1.0 / 35), 1e-12, 1e-12);
  require_close(rt::adaptive_avg_pool2d(x, {8, 9}), ref_adaptive(x, 8, 9), 1e-12, 1e-12);  // upsampling bins
  Tensor h = rt::adaptive_avg_pool2d(x.to(rt::kFloat16), {2, 2});
  CHECK(h.dtype() == rt::kFloat16);
  require_close(h, ref_adaptive(x, 2, 2), 1e-2, 1e-2);
}

TEST_CASE("max_pool2d: ties, NaN, integers and gradient routing") {
  Tensor ones = rt::ones({1, 1, 4, 4}, rt::kFloat64).requires_grad_();
  rt::max_pool2d(ones, {2}).sum().backward();  // ties: the first maximum of each window wins
  require_close(ones.grad(), rt::tensor({1., 0., 1., 0., 0., 0., 0., 0., 1., 0., 1., 0., 0., 0., 0., 0.}, Shape{1, 1, 4, 4}));
  Tensor x = rt::tensor({1., 5., 2., 0., 3., 4., 6., 1., 0.}, Shape{1, 3, 3}).requires_grad_();
  Tensor y = rt::max_pool2d(x, {2}, {1});  // overlapping windows share the 5
  require_close(y, rt::tensor({5., 5., 6., 4.}, Shape{1, 2, 2}));
  CHECK(y.grad_fn()->name() == "MaxPool2DWithIndicesBackward0");
  y.sum().backward();
  require_close(x.grad(), rt::tensor({0., 2., 0., 0., 0., 1., 1., 0., 0.}, Shape{1, 3, 3}));
  Tensor n = rt::tensor({1., std::nan(""), 2., 3.}, Shape{1, 2, 2});
  CHECK(std::isnan(rt::max_pool2d(n, {2}).item<double>()));
  Tensor i = rt::from_vector<int64_t>({3, 9, -2, 4}, Shape{1, 2, 2});
  Tensor mi = rt::max_pool2d(i, {2});
  CHECK(mi.dtype() == rt::kInt64);
  CHECK(mi.item<int64_t>() == 9);
  CHECK(rt::avg_pool2d(x, {2}).grad_fn()->name() == "AvgPool2DBackward0");
  CHECK(rt::adaptive_avg_pool2d(x, {1}).grad_fn()->name() == "AdaptiveAvgPool2DBackward0");
  CHECK(rt::conv2d(x, rt::ones({1, 1, 2, 2}, rt::kFloat64)).grad_fn()->name() != "");
}

TEST_CASE("conv and pool: gradcheck") {
  auto conv = [](Shape s, Shape p, Shape d, int64_t g) {
    return [=](const TensorList& x) { return rt::conv2d(x[0], x[1], x.size() > 2 ? x[2] : Tensor(), s, p, d, g); };
  };
  rt::testing::run_grad_cases({
      {"conv2d", {{2, 2, 5, 5}, {3, 2, 3, 3}, {3}}, conv({1}, {0}, {1}, 1)},
      {"conv2d_stride_padding", {{1, 2, 6, 5}, {2, 2, 3, 2}, {2}}, conv({2, 1}, {1, 0}, {1}, 1)},
      {"conv2d_dilation", {{1, 2, 7, 7}, {2, 2, 3, 3}}, conv({1}, {2}, {2}, 1)},
      {"conv2d_groups", {{2, 4, 5, 4}, {4, 2, 2, 3}, {4}}, conv({2}, {1}, {1, 2}, 2)},
      {"conv2d_depthwise", {{1, 3, 5, 5}, {3, 1, 3, 3}}, conv({1}, {1}, {1}, 3)},
      {"conv2d_pointwise", {{2, 3, 3, 4}, {2, 3, 1, 1}, {2}}, conv({1}, {0}, {1}, 1)},
      {"conv2d_unbatched", {{2, 4, 4}, {2, 2, 3, 3}, {2}}, conv({1}, {1}, {1}, 1)},
      {"conv1d", {{2, 4, 9}, {4, 2, 3}, {4}},
       [](const TensorList& x) { return rt::conv1d(x[0], x[1], x[2], 2, 1, 2, 2); }},
      {"conv1d_unbatched", {{3, 6}, {2, 3, 2}}, [](const TensorList& x) { return rt::conv1d(x[0], x[1]); }},
      {"max_pool2d", {{2, 2, 5, 5}}, [](const TensorList& x) { return rt::max_pool2d(x[0], {2}); }},
      {"max_pool2d_overlap_pad_ceil", {{1, 2, 6, 5}}, [](const TensorList& x) { return rt::max_pool2d(x[0], {3}, {2}, {1}, {1}, true); }},
      {"max_pool2d_dilation", {{1, 1, 7, 7}}, [](const TensorList& x) { return rt::max_pool2d(x[0], {2, 3}, {1, 2}, {1}, {2}); }},
      {"avg_pool2d", {{2, 2, 4, 6}}, [](const TensorList& x) { return rt::avg_pool2d(x[0], {2}); }},
      {"avg_pool2d_pad_ceil", {{1, 2, 5, 5}}, [](const TensorList& x) { return rt::avg_pool2d(x[0], {3}, {2}, {1}, true, true); }},
      {"avg_pool2d_exclude_pad", {{1, 2, 6, 5}}, [](const TensorList& x) { return rt::avg_pool2d(x[0], {3, 2}, {2, 1}, {1}, true, false); }},
      {"adaptive_avg_pool2d", {{2, 2, 5, 7}}, [](const TensorList& x) { return rt::adaptive_avg_pool2d(x[0], {3, 4}); }},
      {"adaptive_avg_pool2d_unbatched", {{2, 4, 4}}, [](const TensorList& x) { return rt::adaptive_avg_pool2d(x[0], {3}); }},
  });
}

TEST_CASE("conv: error messages name the op, shapes, dimension and hint") {
  Tensor w = rt::zeros({16, 3, 3, 3});
  std::string msg;
  {
    rt::ModuleScope net("net"), conv("conv1");
    msg = message_of([&] { rt::conv2d(rt::zeros({8, 4, 32, 32}), w); });
  }
  CHECK(msg ==
        "conv2d: input [8, 4, 32, 32] has 4 channels (dimension 1), but weight [16, 3, 3, 3] with groups=1 expects 3 "
        "(weight.size(1) * groups) (in module 'net.conv1'). Hint: in_channels of the layer must equal the input's "
        "channel dimension");
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({8, 4, 32, 32}), w), rt::ShapeError);
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({8, 32, 32, 3}), w); }), Catch::Contains("channels-last (NHWC)"));
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({8, 6, 32, 32}), rt::zeros({10, 2, 3, 3}), {}, {1}, {0}, {1}, 3); }),
             Catch::Contains("out_channels (weight.size(0) = 10) must be divisible by groups (3)"));
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({8, 3, 32, 32}), rt::zeros({16, 3, 3})); }),
             Catch::Contains("conv2d: expected weight to be 4-D") && Catch::Contains("[16, 3, 3]"));
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({32, 32}), w); }), Catch::Contains("got shape [32, 32]"));
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({1, 3, 4, 4}), w, rt::zeros({8})); }),
             Catch::Contains("bias of shape [8] does not match out_channels 16"));
  CHECK_THAT(message_of([&] { rt::conv2d(rt::zeros({1, 3, 2, 2}), w, {}, {1}, {0}, {2}); }),
             Catch::Contains("padded to [2, 2] is smaller than the dilated kernel [5, 5]"));
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({1, 3, 8, 8}), w, {}, {0}), rt::ValueError);
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({1, 3, 8, 8}), w, {}, {1, 1, 1}), rt::ValueError);
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({1, 3, 8, 8}), w, {}, {1}, {0}, {1}, 0), rt::ValueError);
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({1, 3, 8, 8}, rt::kFloat64), w), rt::DTypeError);
  CHECK_THROWS_AS(rt::conv2d(rt::zeros({1, 3, 8, 8}, rt::kInt64), rt::zeros({16, 3, 3, 3}, rt::kInt64)), rt::DTypeError);
  CHECK_THAT(message_of([&] { rt::conv1d(rt::zeros({2, 5, 10}), rt::zeros({4, 2, 3})); }),
             Catch::Contains("conv1d: input [2, 5, 10] has 5 channels") && Catch::Contains("expects 2"));
  CHECK_THAT(message_of([&] { rt::conv1d(rt::zeros({2, 2, 10}), rt::zeros({4, 2, 3, 3})); }),
             Catch::Contains("conv1d: expected weight to be 3-D"));
}

TEST_CASE("pool: error messages") {
  Tensor x = rt::zeros({1, 2, 8, 8});
  CHECK_THAT(message_of([&] { rt::max_pool2d(x, {3}, {}, {2}); }),
             Catch::Contains("max_pool2d: padding [2, 2] should be at most half of the kernel size [3, 3]"));
  CHECK_THAT(message_of([&] { rt::max_pool2d(rt::zeros({8, 8}), {2}); }),
             Catch::Contains("max_pool2d: expected a 3-D [C, H, W] or 4-D [N, C, H, W] input") && Catch::Contains("[8, 8]"));
  CHECK_THAT(message_of([&] { rt::avg_pool2d(rt::zeros({1, 1, 2, 2}), {3}); }),
             Catch::Contains("avg_pool2d: output size [0, 0] is too small"));
  CHECK_THROWS_AS(rt::max_pool2d(x, {2, 2, 2}), rt::ValueError);
  CHECK_THROWS_AS(rt::max_pool2d(x, {0}), rt::ValueError);
  CHECK_THROWS_AS(rt::avg_pool2d(rt::zeros({1, 2, 4, 4}, rt::kInt64), {2}), rt::DTypeError);
  CHECK_THROWS_AS(rt::adaptive_avg_pool2d(rt::zeros({1, 0, 4, 4}), {2}), rt::ShapeError);
  CHECK_THROWS_AS(rt::adaptive_avg_pool2d(x, {-1}), rt::ValueError);
}
