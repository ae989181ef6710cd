// CPU convolutions through oneDNN (rt::backends::mkldnn) against the im2col path: outputs and every
// gradient agree over a table of geometries, the switch really switches (the nested op each path opens
// says which ran), and what oneDNN declines (float64) runs im2col.
#include <catch2/catch.hpp>
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "rt/backends.h"
#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::testing::random;
using rt::testing::require_close;

namespace {

// Names of every op that ran, nested ones included (the backward may run on another thread).
struct OpNames : rt::OpObserver {
  std::mutex mu;
  std::vector<std::string> names;
  OpNames() { rt::add_op_observer(this); }
  ~OpNames() override { rt::remove_op_observer(this); }
  void on_op_end(const rt::OpEvent& e) override {
    std::lock_guard<std::mutex> lock(mu);
    names.emplace_back(e.name);
  }
  bool saw(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

// Restores the switch a test changed.
struct MkldnnEnabled {
  const bool saved = rt::backends::mkldnn::enabled();
  explicit MkldnnEnabled(bool on) { rt::backends::mkldnn::set_enabled(on); }
  ~MkldnnEnabled() { rt::backends::mkldnn::set_enabled(saved); }
};

struct ConvCase {
  std::string name;
  Shape x, w;
  Shape stride = {1}, padding = {0}, dilation = {1};
  int64_t groups = 1;
  bool bias = true;
  bool conv1d = false;
  bool transposed_input = false;  // x built as a transposed view of its last two dims (non-contiguous)
};

struct Result {
  Tensor out, gx, gw, gb;
};

Result run(const ConvCase& c, bool onednn) {
  MkldnnEnabled path(onednn);
  Tensor x = random(c.x, rt::kFloat32, -1, 1, 1);
  if (c.transposed_input) x = random({c.x[0], c.x[1], c.x[3], c.x[2]}, rt::kFloat32, -1, 1, 1).transpose(2, 3);
  x.requires_grad_(true);
  Tensor w = random(c.w, rt::kFloat32, -1, 1, 2).requires_grad_(true);
  Tensor b = c.bias ? random({c.w[0]}, rt::kFloat32, -1, 1, 3).requires_grad_(true) : Tensor();
  Tensor out = c.conv1d ? rt::conv1d(x, w, b, c.stride[0], c.padding[0], c.dilation[0], c.groups)
                        : rt::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  Tensor weights = random(out.sizes(), rt::kFloat32, -1, 1, 4);  // a loss that weighs every output differently
  (out * weights).sum().backward();
  return {out.detach(), x.grad(), w.grad(), c.bias ? b.grad() : Tensor()};
}

const std::vector<ConvCase>& cases() {
  static const std::vector<ConvCase> table = {
      {"3x3 pad 1", {2, 3, 9, 9}, {4, 3, 3, 3}, {1}, {1}},
      {"3x3 no bias batch 1", {1, 16, 8, 8}, {32, 16, 3, 3}, {1}, {1}, {1}, 1, false},
      {"stride 2 pad 1", {2, 16, 9, 10}, {16, 16, 3, 3}, {2}, {1}},
      {"stride 2 pad 0 1x1 downsample", {3, 16, 8, 8}, {32, 16, 1, 1}, {2}, {0}, {1}, 1, false},
      {"pad 2 5x5", {2, 4, 7, 7}, {6, 4, 5, 5}, {1}, {2}},
      {"dilation 2", {2, 16, 11, 11}, {16, 16, 3, 3}, {1}, {2}, {2}},
      {"asymmetric stride padding dilation", {2, 3, 12, 9}, {5, 3, 3, 2}, {2, 1}, {1, 0}, {1, 2}},
      {"groups 2", {2, 8, 7, 7}, {6, 4, 3, 3}, {1}, {1}, {1}, 2},
      {"groups 2 wide", {2, 32, 8, 8}, {32, 16, 3, 3}, {1}, {1}, {1}, 2},
      {"depthwise", {2, 16, 9, 9}, {16, 1, 3, 3}, {1}, {1}, {1}, 16},
      {"depthwise stride 2", {2, 16, 9, 9}, {16, 1, 3, 3}, {2}, {1}, {1}, 16, false},
      {"single input channel (MNIST first layer)", {4, 1, 28, 28}, {32, 1, 3, 3}, {1}, {1}},
      {"non-contiguous input", {2, 16, 6, 7}, {8, 16, 3, 3}, {1}, {1}, {1}, 1, true, false, true},
      {"conv1d", {2, 4, 20}, {6, 4, 5}, {2}, {1}, {1}, 1, true, true},
      {"conv1d depthwise dilation 2", {2, 6, 20}, {6, 1, 3}, {1}, {2}, {2}, 6, false, true},
  };
  return table;
}

}  // namespace

TEST_CASE("oneDNN and im2col convolutions agree on outputs and gradients") {
  for (const ConvCase& c : cases()) {
    INFO("case: " << c.name);
    const Result fast = run(c, true);
    const Result slow = run(c, false);
    require_close(fast.out, slow.out, 1e-4, 1e-5);
    require_close(fast.gx, slow.gx, 1e-4, 1e-4);
    require_close(fast.gw, slow.gw, 1e-4, 1e-4);
    if (c.bias) require_close(fast.gb, slow.gb, 1e-4, 1e-4);
  }
}

TEST_CASE("the mkldnn switch chooses the path and the nested op names it") {
  const ConvCase c{"3x3", {2, 16, 8, 8}, {16, 16, 3, 3}, {1}, {1}};
  {
    OpNames ops;
    run(c, true);
    CHECK(ops.saw("mkldnn_convolution"));
    CHECK(ops.saw("mkldnn_convolution_backward"));
    CHECK_FALSE(ops.saw("_slow_conv2d_forward"));
    CHECK_FALSE(ops.saw("_slow_conv2d_backward"));
  }
  {
    OpNames ops;
    run(c, false);
    CHECK(ops.saw("_slow_conv2d_forward"));
    CHECK(ops.saw("_slow_conv2d_backward"));
    CHECK_FALSE(ops.saw("mkldnn_convolution"));
    CHECK_FALSE(ops.saw("mkldnn_convolution_backward"));
  }
}

TEST_CASE("every geometry of the table runs on oneDNN while it is enabled") {
  for (const ConvCase& c : cases()) {
    INFO("case: " << c.name);
    OpNames ops;
    run(c, true);
    CHECK(ops.saw("mkldnn_convolution"));
    CHECK(ops.saw("mkldnn_convolution_backward"));
    CHECK_FALSE(ops.saw("_slow_conv2d_forward"));
  }
}

TEST_CASE("float64 convolutions, which oneDNN declines, run im2col and say so") {
  MkldnnEnabled on(true);
  OpNames ops;
  Tensor x = random({2, 3, 6, 6}, rt::kFloat64, -1, 1, 5).requires_grad_(true);
  Tensor w = random({4, 3, 3, 3}, rt::kFloat64, -1, 1, 6).requires_grad_(true);
  rt::conv2d(x, w, Tensor(), {1}, {1}).sum().backward();
  CHECK(ops.saw("_slow_conv2d_forward"));
  CHECK(ops.saw("_slow_conv2d_backward"));
  CHECK_FALSE(ops.saw("mkldnn_convolution"));
  REQUIRE(x.grad().defined());
}

TEST_CASE("bfloat16 and float16 convolutions run through oneDNN and match float32 to their precision") {
  MkldnnEnabled on(true);
  const Tensor x = random({2, 16, 6, 6}, rt::kFloat32, -1, 1, 7), w = random({8, 16, 3, 3}, rt::kFloat32, -1, 1, 8);
  const Tensor b = random({8}, rt::kFloat32, -1, 1, 9);
  const Tensor expected = rt::conv2d(x, w, b, {1}, {1});
  for (rt::ScalarType half : {rt::kBFloat16, rt::kFloat16}) {
    INFO("dtype " << rt::dtype_name(half));
    OpNames ops;
    Tensor xh = x.to(half).requires_grad_(true), wh = w.to(half).requires_grad_(true), bh = b.to(half).requires_grad_(true);
    const Tensor out = rt::conv2d(xh, wh, bh, {1}, {1});
    CHECK(out.dtype() == half);
    out.sum().backward();
    CHECK(ops.saw("mkldnn_convolution"));
    CHECK(ops.saw("mkldnn_convolution_backward"));
    require_close(out.to(rt::kFloat32), expected, 2e-2, 5e-2);  // bfloat16 keeps 8 bits of mantissa
    CHECK(xh.grad().dtype() == half);
    CHECK(wh.grad().dtype() == half);
    CHECK(bh.grad().dtype() == half);
  }
  // The gradients against float32's.
  Tensor x32 = x.clone().requires_grad_(true), w32 = w.clone().requires_grad_(true);
  rt::conv2d(x32, w32, Tensor(), {1}, {1}).sum().backward();
  Tensor xb = x.to(rt::kBFloat16).requires_grad_(true), wb = w.to(rt::kBFloat16).requires_grad_(true);
  rt::conv2d(xb, wb, Tensor(), {1}, {1}).sum().backward();
  require_close(xb.grad().to(rt::kFloat32), x32.grad(), 2e-2, 5e-2);
  require_close(wb.grad().to(rt::kFloat32), w32.grad(), 2e-2, 2e-1);
}

TEST_CASE("rt::backends::mkldnn reports the oneDNN it runs on") {
  CHECK(rt::backends::mkldnn::is_available());
  const std::string v = rt::backends::mkldnn::version();
  CHECK(v.rfind("2.", 0) == 0);
  CHECK(v.find("OpenMP") != std::string::npos);
}

namespace {

struct AvgPoolCase {
  Shape x, kernel, stride, padding;
  bool ceil_mode = false, count_include_pad = true;
  bool onednn = true;  // whether oneDNN can express its divisors
};

}  // namespace

TEST_CASE("avg_pool2d through oneDNN agrees with the loops, forward and backward") {
  const std::vector<AvgPoolCase> table = {
      {{2, 3, 8, 8}, {2}, {2}, {0}},
      {{4, 5, 9, 7}, {3}, {1}, {1}},
      {{4, 5, 9, 7}, {3}, {1}, {1}, false, false},
      {{2, 3, 10, 11}, {3, 2}, {2, 3}, {1, 0}},
      {{3, 7, 7}, {3}, {2}, {1}, true, true, true},      // unbatched; ceil_mode, no window past the padding
      {{3, 7, 7}, {2}, {2}, {0}, true, true, false},     // ceil_mode window past the input, padding counted
      {{2, 3, 9, 9}, {2}, {2}, {1}, true, false, true},  // ceil_mode, padding excluded from the divisor
      {{2, 3, 8, 8}, {3}, {2}, {0}, true, true, false},  // the same, batched
  };
  for (const AvgPoolCase& c : table) {
    INFO("input " << rt::format_shape(c.x) << " kernel " << rt::format_shape(c.kernel) << " ceil_mode " << c.ceil_mode
                  << " count_include_pad " << c.count_include_pad);
    Tensor outs[2], grads[2];
    for (int onednn = 0; onednn < 2; ++onednn) {
      MkldnnEnabled path(onednn == 1);
      OpNames ops;
      Tensor x = random(c.x, rt::kFloat32, -1, 1, 11).requires_grad_(true);
      outs[onednn] = rt::avg_pool2d(x, c.kernel, c.stride, c.padding, c.ceil_mode, c.count_include_pad);
      (outs[onednn] * random(outs[onednn].sizes(), rt::kFloat32, -1, 1, 12)).sum().backward();
      grads[onednn] = x.grad();
      const bool expect = onednn == 1 && c.onednn;
      CHECK(ops.saw("mkldnn_avg_pool2d") == expect);
      CHECK(ops.saw("mkldnn_avg_pool2d_backward") == expect);
    }
    require_close(outs[1], outs[0], 1e-5, 1e-6);
    require_close(grads[1], grads[0], 1e-5, 1e-6);
  }
}
