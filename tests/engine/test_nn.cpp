// rt::nn: parameter names vs PyTorch's, state_dict, modes, scopes, init statistics, attention.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "rt/nn/nn.h"
#include "testing.h"

using namespace rt;
using rt::testing::require_close;
using rt::testing::values;

namespace {

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}

int64_t count(const TensorList& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += t.numel();
  return n;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double var_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(v.size());
}

// A model with PyTorch-style nesting: encoder.layers.{0,1} and a head.
struct Encoder : nn::Module {
  std::shared_ptr<nn::ModuleList> layers;
  Encoder() : Module("Encoder") {
    layers = register_module("layers", std::make_shared<nn::ModuleList>());
    for (int i = 0; i < 2; ++i)
      layers->push_back(std::make_shared<nn::TransformerEncoderLayer>(
          8, 2, nn::TransformerEncoderLayerOptions{.dim_feedforward = 16, .dropout = 0.0, .batch_first = true}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = x;
    for (const auto& l : *layers) y = (*l)(y);
    return y;
  }
};

struct Net : nn::Module {
  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<nn::Linear> head;
  Net() : Module("Net") {
    encoder = register_module("encoder", std::make_shared<Encoder>());
    head = register_module("head", std::make_shared<nn::Linear>(8, 3));
  }
  Tensor forward(const Tensor& x) override { return (*head)((*encoder)(x)); }
};

struct ScopeRecorder : OpObserver {
  std::set<std::string> modules;
  void on_op_end(const OpEvent& e) override { modules.insert(e.module); }
};

struct CategoryRecorder : MemoryObserver {
  std::map<MemoryCategory, size_t> bytes;
  void on_memory_event(const MemoryEvent& e) override {
    if (e.is_alloc) bytes[e.category] += e.bytes;
  }
};

}  // namespace

TEST_CASE("nn: parameter names and counts match PyTorch") {
  manual_seed(0);
  using V = std::vector<std::string>;
  SECTION("Linear") {
    nn::Linear fc(4, 3);
    CHECK(names_of(fc.named_parameters()) == V{"weight", "bias"});
    CHECK(fc.weight.sizes() == Shape{3, 4});
    CHECK(fc.bias.sizes() == Shape{3});
    CHECK(fc.weight.requires_grad());
    CHECK(names_of(nn::Linear(4, 3, false).named_parameters()) == V{"weight"});
  }
  SECTION("Conv2d") {
    nn::Conv2d conv(3, 8, 3);
    CHECK(names_of(conv.named_parameters()) == V{"weight", "bias"});
    CHECK(conv.weight.sizes() == Shape{8, 3, 3, 3});
    nn::Conv2d grouped(4, 8, {3, 5}, {.groups = 2, .bias = false});
    CHECK(grouped.weight.sizes() == Shape{8, 2, 3, 5});
    CHECK(names_of(grouped.named_parameters()) == V{"weight"});
  }
  SECTION("BatchNorm2d, LayerNorm, Embedding") {
    nn::BatchNorm2d bn(5);
    CHECK(names_of(bn.named_parameters()) == V{"weight", "bias"});
    CHECK(names_of(bn.named_buffers()) == V{"running_mean", "running_var", "num_batches_tracked"});
    CHECK(bn.state_dict().keys() == V{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
    CHECK(bn.num_batches_tracked.dtype() == kInt64);
    CHECK(bn.num_batches_tracked.dim() == 0);
    CHECK(nn::BatchNorm2d(5, {.affine = false, .track_running_stats = false}).state_dict().empty());
    CHECK(names_of(nn::LayerNorm(6).named_parameters()) == V{"weight", "bias"});
    CHECK(names_of(nn::LayerNorm(6, {.bias = false}).named_parameters()) == V{"weight"});
    CHECK(nn::Embedding(10, 3).weight.sizes() == Shape{10, 3});
  }
  SECTION("MultiheadAttention") {
    nn::MultiheadAttention mha(8, 2);
    CHECK(names_of(mha.named_parameters()) == V{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
    CHECK(mha.in_proj_weight.sizes() == Shape{24, 8});
    CHECK(count(mha.parameters()) == 24 * 8 + 24 + 64 + 8);
  }
  SECTION("TransformerEncoderLayer") {
    nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16});
    CHECK(names_of(layer.named_parameters()) ==
          V{"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
            "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
            "norm2.weight", "norm2.bias"});
    CHECK(count(layer.parameters()) == 600);  // sum(p.numel() for p in layer.parameters()) in PyTorch
    std::vector<std::string> children;
    for (const auto& [n, c] : layer.named_children()) children.push_back(n);
    CHECK(children == V{"self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1", "dropout2"});
  }
  SECTION("Sequential and nested modules") {
    nn::Sequential seq(std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(8, 2));
    CHECK(names_of(seq.named_parameters()) == V{"0.weight", "0.bias", "2.weight", "2.bias"});
    CHECK(seq.parameters(false).empty());
    Net net;
    const auto names = names_of(net.named_parameters());
    CHECK(names.size() == 26);
    CHECK(names.front() == "encoder.layers.0.self_attn.in_proj_weight");
    CHECK(std::count(names.begin(), names.end(), "encoder.layers.1.linear1.bias") == 1);
    CHECK(names.back() == "head.bias");
    std::vector<std::string> mods;
    for (const auto& [n, m] : net.named_modules()) mods.push_back(n);
    CHECK(mods[0] == "");
    CHECK(mods[1] == "encoder");
    CHECK(mods[2] == "encoder.layers");
    CHECK(mods[3] == "encoder.layers.0");
    CHECK(mods[4] == "encoder.layers.0.self_attn");
  }
}

TEST_CASE("nn: registration rules") {
  nn::Module m("Custom");
  m.register_parameter("w", zeros({2}));
  CHECK_THROWS_AS(m.register_buffer("w", zeros({2})), ValueError);
  CHECK_THROWS_AS(m.register_parameter("a.b", zeros({2})), ValueError);
  CHECK_THROWS_AS(m.register_parameter("", zeros({2})), ValueError);
  CHECK_THROWS_AS(m.register_module("w", std::make_shared<nn::ReLU>()), ValueError);
  Tensor replaced = m.register_parameter("w", ones({3}));
  CHECK(m.named_parameters().size() == 1);
  CHECK(m.named_parameters()[0].second.is_same(replaced));
  CHECK_THROWS_AS(m.forward(zeros({1})), NotImplementedError);
  // A non-persistent buffer is a buffer but not state.
  m.register_buffer("cache", zeros({2}), /*persistent=*/false);
  CHECK(m.buffers().size() == 1);
  CHECK(m.state_dict().keys() == std::vector<std::string>{"w"});
}

TEST_CASE("nn: to_string matches PyTorch's repr") {
  nn::Sequential seq(std::make_shared<nn::Conv2d>(1, 20, 5), std::make_shared<nn::ReLU>(),
                     std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
                     std::make_shared<nn::Linear>(20, 10, false), std::make_shared<nn::Dropout>(0.1),
                     std::make_shared<nn::GELU>("tanh"), std::make_shared<nn::BatchNorm2d>(16),
                     std::make_shared<nn::LayerNorm>(8), std::make_shared<nn::Embedding>(10, 3, nn::EmbeddingOptions{.padding_idx = -1}),
                     std::make_shared<nn::AvgPool2d>(2), std::make_shared<nn::Conv2d>(3, 8, 3, nn::Conv2dOptions{.stride = {2}, .padding = {1}, .groups = 1, .bias = false}));
  CHECK(seq.to_string() ==
        "Sequential(\n"
        "  (0): Conv2d(1, 20, kernel_size=(5, 5), stride=(1, 1))\n"
        "  (1): ReLU()\n"
        "  (2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  (3): Flatten(start_dim=1, end_dim=-1)\n"
        "  (4): Linear(in_features=20, out_features=10, bias=False)\n"
        "  (5): Dropout(p=0.1, inplace=False)\n"
        "  (6): GELU(approximate='tanh')\n"
        "  (7): BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
        "  (8): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
        "  (9): Embedding(10, 3, padding_idx=9)\n"
        "  (10): AvgPool2d(kernel_size=2, stride=2, padding=0)\n"
        "  (11): Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)\n"
        ")");
  nn::ModuleList list(std::make_shared<nn::ReLU>(), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(2, 2));
  CHECK(list.to_string() ==
        "ModuleList(\n"
        "  (0-1): 2 x ReLU()\n"
        "  (2): Linear(in_features=2, out_features=2, bias=True)\n"
        ")");
  nn::MultiheadAttention mha(8, 2);
  CHECK(mha.to_string() ==
        "MultiheadAttention(\n"
        "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)\n"
        ")");
  CHECK(nn::BatchNorm2d(4, {.momentum = std::nullopt}).to_string() ==
        "BatchNorm2d(4, eps=1e-05, momentum=None, affine=True, track_running_stats=True)");
}

TEST_CASE("nn: state_dict round trip copies into the existing tensors") {
  manual_seed(1);
  auto make = [] {
    return std::make_shared<nn::Sequential>(std::make_shared<nn::Conv2d>(4, 6, 1), std::make_shared<nn::ReLU>(),
                                            std::make_shared<nn::BatchNorm2d>(6), std::make_shared<nn::Flatten>(),
                                            std::make_shared<nn::Linear>(6, 2));
  };
  auto a = make(), b = make();
  CHECK(a->state_dict().keys() ==
        std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "2.running_mean", "2.running_var",
                                 "2.num_batches_tracked", "4.weight", "4.bias"});
  {
    NoGradGuard ng;
    a->at<nn::BatchNorm2d>(2)->running_mean.fill_(0.5);
    a->at<nn::BatchNorm2d>(2)->num_batches_tracked.fill_(7);
  }
  Tensor b_weight = b->at<nn::Conv2d>(0)->weight;
  auto result = b->load_state_dict(a->state_dict());
  CHECK(result.missing_keys.empty());
  CHECK(result.unexpected_keys.empty());
  CHECK(b->at<nn::Conv2d>(0)->weight.is_same(b_weight));  // same tensor, new values
  for (const auto& [k, t] : a->state_dict()) require_close(b->state_dict().at(k), t, 0, 0);
  CHECK(b->at<nn::BatchNorm2d>(2)->num_batches_tracked.item<int64_t>() == 7);
  CHECK(b_weight.requires_grad());
  CHECK(b_weight.is_leaf());
  a->eval();
  b->eval();
  Tensor x = rt::testing::random({2, 4, 1, 1}, kFloat32, -1, 1, 3);
  require_close((*b)(x), (*a)(x), 0, 0);
}

TEST_CASE("nn: load_state_dict reports missing, unexpected and mismatched keys") {
  nn::Sequential model(std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::Linear>(3, 2));
  nn::StateDict sd = model.state_dict();
  sd.erase("1.bias");
  sd.insert("2.weight", zeros({1}));
  const std::string msg = message_of([&] { model.load_state_dict(sd); });
  CHECK(msg.find("Error(s) in loading state_dict for Sequential") != std::string::npos);
  CHECK(msg.find("Missing key(s) in state_dict: \"1.bias\"") != std::string::npos);
  CHECK(msg.find("Unexpected key(s) in state_dict: \"2.weight\"") != std::string::npos);
  CHECK_THROWS_AS(model.load_state_dict(sd), ValueError);

  auto r = model.load_state_dict(sd, /*strict=*/false);
  CHECK(r.missing_keys == std::vector<std::string>{"1.bias"});
  CHECK(r.unexpected_keys == std::vector<std::string>{"2.weight"});

  nn::StateDict wrong = model.state_dict();
  wrong.insert("0.weight", zeros({3, 5}));
  const Tensor before = model.at<nn::Linear>(1)->weight.clone();
  const std::string m2 = message_of([&] { model.load_state_dict(wrong, false); });
  CHECK(m2.find("size mismatch for 0.weight: copying a param with shape [3, 5] from checkpoint, the shape in "
                "current model is [3, 4]") != std::string::npos);
  require_close(model.at<nn::Linear>(1)->weight, before, 0, 0);  // nothing was copied
}

TEST_CASE("nn: train/eval switches Dropout and BatchNorm") {
  manual_seed(2);
  auto seq = std::make_shared<nn::Sequential>(std::make_shared<nn::Dropout>(0.5), std::make_shared<nn::BatchNorm2d>(3));
  CHECK(seq->is_training());
  seq->eval();
  CHECK(!seq->at<nn::Dropout>(0)->is_training());
  CHECK(!seq->at<nn::BatchNorm2d>(1)->is_training());
  seq->train();
  CHECK(seq->at<nn::BatchNorm2d>(1)->is_training());

  nn::Dropout drop(0.5);
  Tensor x = ones({1000});
  auto y = values(drop(x));
  const auto zeros_n = std::count(y.begin(), y.end(), 0.0);
  CHECK(zeros_n > 400);
  CHECK(zeros_n < 600);
  CHECK(std::count_if(y.begin(), y.end(), [](double v) { return v == 0.0 || std::abs(v - 2.0) < 1e-6; }) == 1000);
  drop.eval();
  require_close(drop(x), x, 0, 0);

  nn::BatchNorm2d bn(3);
  Tensor in = rt::testing::random({4, 3, 2, 2}, kFloat32, -2, 3, 5);
  auto v = values(in);
  std::vector<double> mean(3, 0), var(3, 0);
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i) mean[size_t(c)] += v[size_t(n * 12 + c * 4 + i)] / 16;
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 4; ++i) var[size_t(c)] += std::pow(v[size_t(n * 12 + c * 4 + i)] - mean[size_t(c)], 2);
  Tensor out = bn(in);
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
  std::vector<double> exp_rm, exp_rv;
  for (int c = 0; c < 3; ++c) {
    exp_rm.push_back(0.1 * mean[size_t(c)]);
    exp_rv.push_back(0.9 + 0.1 * var[size_t(c)] / 15);  // unbiased
  }
  require_close(bn.running_mean, from_vector(exp_rm).to(kFloat32), 1e-5, 1e-6);
  require_close(bn.running_var, from_vector(exp_rv).to(kFloat32), 1e-5, 1e-6);
  // Training output uses batch statistics (biased variance).
  std::vector<double> expected(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t c = (i / 4) % 3;
    expected[i] = (v[i] - mean[c]) / std::sqrt(var[c] / 16 + 1e-5);
  }
  require_close(out, from_vector(expected, {4, 3, 2, 2}).to(kFloat32), 1e-4, 1e-5);
  bn.eval();
  Tensor eval_out = bn(in);
  CHECK(bn.num_batches_tracked.item<int64_t>() == 1);
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t c = (i / 4) % 3;
    expected[i] = (v[i] - exp_rm[c]) / std::sqrt(exp_rv[c] + 1e-5);
  }
  require_close(eval_out, from_vector(expected, {4, 3, 2, 2}).to(kFloat32), 1e-4, 1e-5);

  nn::BatchNorm2d cumulative(3, {.momentum = std::nullopt});
  cumulative(in);
  cumulative(in * 3);
  std::vector<double> avg;
  for (int c = 0; c < 3; ++c) avg.push_back((mean[size_t(c)] + 3 * mean[size_t(c)]) / 2);
  require_close(cumulative.running_mean, from_vector(avg).to(kFloat32), 1e-5, 1e-6);
  CHECK_THROWS_AS(bn(zeros({3, 2, 2})), ShapeError);
}

TEST_CASE("nn: errors and profiler events carry the module path") {
  nn::Sequential seq(std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::Linear>(5, 2));
  const std::string msg = message_of([&] { seq(zeros({2, 4})); });
  INFO(msg);
  CHECK(msg.find("in module '1'") != std::string::npos);
  CHECK(msg.find("[2, 3]") != std::string::npos);
  CHECK_THROWS_AS(seq(zeros({2, 4})), ShapeError);
  CHECK(current_module_path().empty());  // scopes unwound by the exception

  Net net;
  net.eval();
  ScopeRecorder rec;
  add_op_observer(&rec);
  net(zeros({1, 3, 8}));
  remove_op_observer(&rec);
  CHECK(rec.modules.count("encoder.layers.0.self_attn") == 1);
  CHECK(rec.modules.count("encoder.layers.1.linear1") == 1);
  CHECK(rec.modules.count("encoder.layers.1.norm2") == 1);
  CHECK(rec.modules.count("head") == 1);

  const std::string deep = message_of([&] { net(zeros({1, 3, 7})); });
  INFO(deep);
  CHECK(deep.find("in module 'encoder.layers.0.self_attn'") != std::string::npos);
  CHECK(deep.find("MultiheadAttention") != std::string::npos);
}

TEST_CASE("nn: parameters and buffers are tagged as Parameter memory") {
  CategoryRecorder rec;
  add_memory_observer(&rec);
  { nn::BatchNorm2d bn(64); nn::Linear fc(32, 16); }
  remove_memory_observer(&rec);
  CHECK(rec.bytes[MemoryCategory::Parameter] >= (64 * 4 + 32 * 16 + 16) * sizeof(float));
}

TEST_CASE("nn: zero_grad sets gradients to none") {
  nn::Linear fc(3, 2);
  fc(ones({4, 3})).sum().backward();
  REQUIRE(fc.weight.grad().defined());
  fc.zero_grad(false);
  require_close(fc.weight.grad(), zeros({2, 3}), 0, 0);
  fc.zero_grad();
  CHECK(!fc.weight.grad().defined());
  CHECK(!fc.bias.grad().defined());
}

TEST_CASE("nn: init statistics follow PyTorch's schemes") {
  manual_seed(3);
  nn::Linear fc(400, 300);
  const double bound = 1.0 / std::sqrt(400.0);
  auto w = values(fc.weight);
  CHECK(*std::max_element(w.begin(), w.end()) <= bound);
  CHECK(*std::min_element(w.begin(), w.end()) >= -bound);
  CHECK(mean_of(w) == Approx(0).margin(0.01 * bound));
  CHECK(var_of(w) == Approx(bound * bound / 3).epsilon(0.03));
  auto b = values(fc.bias);
  CHECK(*std::max_element(b.begin(), b.end()) <= bound);

  nn::Conv2d conv(16, 32, 3);
  const double cbound = 1.0 / std::sqrt(16.0 * 9);
  CHECK(var_of(values(conv.weight)) == Approx(cbound * cbound / 3).epsilon(0.05));

  auto e = values(nn::Embedding(200, 100, {.padding_idx = 3}).weight);
  CHECK(mean_of(e) == Approx(0).margin(0.03));
  CHECK(var_of(e) == Approx(1).epsilon(0.04));
  for (int j = 0; j < 100; ++j) CHECK(e[size_t(300 + j)] == 0.0);

  nn::MultiheadAttention mha(64, 4);
  const double xb = std::sqrt(6.0 / (64 + 192));
  auto ip = values(mha.in_proj_weight);
  CHECK(*std::max_element(ip.begin(), ip.end()) <= xb);
  CHECK(var_of(ip) == Approx(xb * xb / 3).epsilon(0.05));
  require_close(mha.in_proj_bias, zeros({192}), 0, 0);
  require_close(mha.out_proj->bias, zeros({64}), 0, 0);

  Tensor t = nn::empty_parameter({256, 128});
  nn::init::kaiming_normal_(t, 0, "fan_in", "relu");
  CHECK(var_of(values(t)) == Approx(2.0 / 128).epsilon(0.03));
  nn::init::xavier_normal_(t, 2.0);
  CHECK(var_of(values(t)) == Approx(4.0 * 2.0 / 384).epsilon(0.03));
  nn::init::constant_(t, 0.25);
  CHECK(values(t)[17] == 0.25);
  CHECK(nn::init::calculate_fan_in_and_fan_out(zeros({8, 3, 5, 5})) == std::pair<int64_t, int64_t>{75, 200});
  CHECK(nn::init::calculate_gain("relu") == Approx(std::sqrt(2.0)));
  CHECK(nn::init::calculate_gain("leaky_relu", std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
  CHECK(nn::init::calculate_gain("tanh") == Approx(5.0 / 3.0));
  CHECK_THROWS_AS(nn::init::xavier_uniform_(zeros({3})), ValueError);
  CHECK_THROWS_AS(nn::init::calculate_gain("softmax"), ValueError);
  REQUIRE(fc.weight.requires_grad());
  nn::init::zeros_(fc.weight);  // fine on a leaf that requires grad
  CHECK(values(fc.weight)[0] == 0.0);
}

namespace {

// Loop reference for MultiheadAttention in [N, L, E] layout, float64.
struct MhaReference {
  std::vector<double> out, weights;  // [N, L, E], [N, L, S] (averaged over heads)
};

MhaReference mha_reference(const nn::MultiheadAttention& m, const Tensor& q, const Tensor& kv, int64_t N, int64_t L,
                           int64_t S, const std::vector<bool>& pad /* [N, S], true = ignore */) {
  const int64_t E = m.embed_dim, H = m.num_heads, D = m.head_dim;
  auto W = values(m.in_proj_weight), B = values(m.in_proj_bias);
  auto Wo = values(m.out_proj->weight), Bo = values(m.out_proj->bias);
  auto xq = values(q), xkv = values(kv);
  auto proj = [&](const std::vector<double>& x, int64_t rows, int64_t part) {
    std::vector<double> y(size_t(N * rows * E));
    for (int64_t r = 0; r < N * rows; ++r)
      for (int64_t j = 0; j < E; ++j) {
        double s = B[size_t(part * E + j)];
        for (int64_t e = 0; e < E; ++e) s += x[size_t(r * E + e)] * W[size_t((part * E + j) * E + e)];
        y[size_t(r * E + j)] = s;
      }
    return y;
  };
  auto Q = proj(xq, L, 0), K = proj(xkv, S, 1), V = proj(xkv, S, 2);
  MhaReference ref;
  ref.weights.assign(size_t(N * L * S), 0.0);
  std::vector<double> O(size_t(N * L * E), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t l = 0; l < L; ++l) {
        std::vector<double> sc(static_cast<size_t>(S));
        double mx = -1e300;
        for (int64_t s = 0; s < S; ++s) {
          double d = 0;
          for (int64_t i = 0; i < D; ++i) d += Q[size_t((n * L + l) * E + h * D + i)] * K[size_t((n * S + s) * E + h * D + i)];
          sc[size_t(s)] = pad[size_t(n * S + s)] ? -INFINITY : d / std::sqrt(double(D));
          mx = std::max(mx, sc[size_t(s)]);
        }
        double z = 0;
        for (auto& v : sc) z += (v = std::exp(v - mx));
        for (int64_t s = 0; s < S; ++s) {
          const double a = sc[size_t(s)] / z;
          ref.weights[size_t((n * L + l) * S + s)] += a / double(H);
          for (int64_t i = 0; i < D; ++i) O[size_t((n * L + l) * E + h * D + i)] += a * V[size_t((n * S + s) * E + h * D + i)];
        }
      }
  ref.out.assign(size_t(N * L * E), 0.0);
  for (int64_t r = 0; r < N * L; ++r)
    for (int64_t i = 0; i < E; ++i) {
      double s = Bo[size_t(i)];
      for (int64_t j = 0; j < E; ++j) s += O[size_t(r * E + j)] * Wo[size_t(i * E + j)];
      ref.out[size_t(r * E + i)] = s;
    }
  return ref;
}

}  // namespace

TEST_CASE("nn: MultiheadAttention matches a manual computation") {
  manual_seed(4);
  const int64_t N = 2, L = 3, S = 5, E = 8;
  nn::MultiheadAttention mha(E, 2, {.batch_first = true});
  {
    NoGradGuard ng;  // non-zero biases so they are exercised
    nn::init::uniform_(mha.in_proj_bias, -0.5, 0.5);
    nn::init::uniform_(mha.out_proj->bias, -0.5, 0.5);
  }
  Tensor q = rt::testing::random({N, L, E}, kFloat32, -1, 1, 10);
  Tensor kv = rt::testing::random({N, S, E}, kFloat32, -1, 1, 11);

  SECTION("cross attention, no masks") {
    auto [out, w] = mha(q, kv, kv);
    auto ref = mha_reference(mha, q, kv, N, L, S, std::vector<bool>(size_t(N * S), false));
    require_close(out, from_vector(ref.out, {N, L, E}).to(kFloat32), 1e-4, 1e-5);
    require_close(w, from_vector(ref.weights, {N, L, S}).to(kFloat32), 1e-4, 1e-6);
    auto [fast, none] = mha(q, kv, kv, {.need_weights = false});
    CHECK(!none.defined());
    require_close(fast, out, 1e-4, 1e-5);
  }
  SECTION("key_padding_mask, bool and float forms") {
    std::vector<bool> pad(size_t(N * S), false);
    pad[3] = pad[4] = pad[5 + 0] = true;
    std::vector<uint8_t> raw;
    for (bool b : pad) raw.push_back(b);
    Tensor mask = from_vector(std::vector<int64_t>(raw.begin(), raw.end()), {N, S}).to(kBool);
    auto [out, w] = mha(q, kv, kv, {.key_padding_mask = mask});
    auto ref = mha_reference(mha, q, kv, N, L, S, pad);
    require_close(out, from_vector(ref.out, {N, L, E}).to(kFloat32), 1e-4, 1e-5);
    require_close(w, from_vector(ref.weights, {N, L, S}).to(kFloat32), 1e-4, 1e-6);
    Tensor additive = zeros({N, S}).masked_fill(mask, -std::numeric_limits<double>::infinity());
    auto [out2, w2] = mha(q, kv, kv, {.key_padding_mask = additive, .need_weights = false});
    require_close(out2, out, 1e-4, 1e-5);
    // The same positions through attn_mask [N * H, L, S].
    Tensor am = mask.reshape({N, 1, 1, S}).expand({N, 2, L, S}).reshape({N * 2, L, S});
    auto [out3, w3] = mha(q, kv, kv, {.attn_mask = am});
    require_close(out3, out, 1e-4, 1e-5);
  }
  SECTION("batch_first=false and unbatched inputs agree") {
    nn::MultiheadAttention seq_first(E, 2);
    seq_first.load_state_dict(mha.state_dict());
    auto [a, wa] = mha(q, kv, kv);
    auto [b, wb] = seq_first(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
    require_close(b.transpose(0, 1), a, 1e-5, 1e-6);
    require_close(wb, wa, 1e-5, 1e-6);
    auto [u, wu] = mha(q.select(0, 1), kv.select(0, 1), kv.select(0, 1));
    require_close(u, a.select(0, 1), 1e-5, 1e-6);
    require_close(wu, wa.select(0, 1), 1e-5, 1e-6);
  }
  SECTION("self attention with a causal mask, per-head weights, gradients") {
    Tensor causal = ones({L, L}).triu(1).to(kBool);  // true above the diagonal = not allowed
    auto [out, w] = mha(q, q, q, {.attn_mask = causal, .average_attn_weights = false});
    CHECK(w.sizes() == Shape{N, 2, L, L});
    auto wv = values(w);
    for (int64_t i = 0; i < N * 2; ++i) {
      CHECK(wv[size_t(i * 9 + 1)] == 0.0);
      CHECK(wv[size_t(i * 9 + 2)] == 0.0);
      CHECK(wv[size_t(i * 9 + 5)] == 0.0);
      CHECK(wv[size_t(i * 9 + 0)] == Approx(1.0));
    }
    out.sum().backward();
    for (const auto& [n, p] : mha.named_parameters()) {
      INFO(n);
      REQUIRE(p.grad().defined());
      CHECK(p.grad().sizes() == p.sizes());
    }
  }
  SECTION("shape errors name the module and the shapes") {
    const std::string msg = message_of([&] { mha(q, zeros({N, S, 6}), kv); });
    CHECK(msg.find("MultiheadAttention") != std::string::npos);
    CHECK(msg.find("[2, 5, 6]") != std::string::npos);
    CHECK_THROWS_AS(mha(q, kv, kv, {.attn_mask = zeros({L, L})}), ShapeError);
    CHECK_THROWS_AS(nn::MultiheadAttention(10, 3), ValueError);
  }
}

TEST_CASE("nn: TransformerEncoderLayer wires its blocks like PyTorch") {
  manual_seed(5);
  for (bool norm_first : {false, true}) {
    INFO("norm_first " << norm_first);
    nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16, .activation = "gelu", .batch_first = true,
                                             .norm_first = norm_first});
    layer.eval();
    Tensor x = rt::testing::random({2, 4, 8}, kFloat32, -1, 1, 20);
    auto sa = [&](const Tensor& t) { return layer.self_attn->forward(t, t, t, {.need_weights = false}).first; };
    auto ff = [&](const Tensor& t) { return layer.linear2->forward(rt::gelu(layer.linear1->forward(t))); };
    Tensor expected;
    if (norm_first) {
      Tensor h = x + sa(layer.norm1->forward(x));
      expected = h + ff(layer.norm2->forward(h));
    } else {
      Tensor h = layer.norm1->forward(x + sa(x));
      expected = layer.norm2->forward(h + ff(h));
    }
    require_close(layer(x), expected, 1e-5, 1e-6);
    CHECK_THROWS_AS(nn::TransformerEncoderLayer(8, 2, {.activation = "tanh"}), ValueError);
  }
  nn::TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16, .dropout = 0.0});
  Tensor x = rt::testing::random({5, 2, 8}, kFloat32, -1, 1, 21);  // [L, N, E]
  Tensor pad = from_vector(std::vector<int64_t>{0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5}).to(kBool);
  Tensor y = layer(x, Tensor(), pad);
  CHECK(y.sizes() == Shape{5, 2, 8});
  for (double v : values(y)) CHECK(std::isfinite(v));
}

TEST_CASE("nn: small modules compute what they claim") {
  manual_seed(6);
  Tensor x = rt::testing::random({2, 3, 4, 4}, kFloat32, -1, 1, 30);
  CHECK(nn::Flatten()(x).sizes() == Shape{2, 48});
  CHECK(nn::MaxPool2d(2)(x).sizes() == Shape{2, 3, 2, 2});
  CHECK(nn::AvgPool2d(2)(x).sizes() == Shape{2, 3, 2, 2});
  CHECK(nn::Conv2d(3, 5, 3, {.padding = {1}})(x).sizes() == Shape{2, 5, 4, 4});
  require_close(nn::ReLU()(x), rt::relu(x), 0, 0);
  require_close(nn::SiLU()(x), rt::silu(x), 0, 0);
  require_close(nn::Tanh()(x), rt::tanh(x), 0, 0);
  require_close(nn::Sigmoid()(x), rt::sigmoid(x), 0, 0);
  require_close(nn::GELU()(x), rt::gelu(x), 0, 0);
  nn::Linear fc(4, 2);
  auto xv = values(x), w = values(fc.weight), b = values(fc.bias);
  auto y = values(fc(x));
  for (int r = 0; r < 24; ++r)
    for (int o = 0; o < 2; ++o) {
      double s = b[size_t(o)];
      for (int i = 0; i < 4; ++i) s += xv[size_t(r * 4 + i)] * w[size_t(o * 4 + i)];
      CHECK(y[size_t(r * 2 + o)] == Approx(s).epsilon(1e-5));
    }
  nn::Embedding emb(5, 3, {.padding_idx = 1});
  Tensor e = emb(tensor({int64_t(1), int64_t(4)}));
  require_close(e.select(0, 1), emb.weight.select(0, 4), 0, 0);
  require_close(e.select(0, 0), zeros({3}), 0, 0);
  CHECK_THROWS_AS(emb(tensor({1.0f})), DTypeError);
  CHECK_THROWS_AS(nn::Embedding(5, 3, {.padding_idx = 5}), ValueError);
  CHECK_THROWS_AS(nn::Dropout(1.5), ValueError);
  CHECK_THROWS_AS(nn::Conv2d(3, 4, 3, {.groups = 2}), ValueError);
  CHECK_THROWS_AS(nn::GELU("fast"), ValueError);
  nn::LayerNorm ln(4);
  CHECK_THROWS_AS(ln(zeros({2, 5})), ShapeError);
  nn::Sequential seq;
  seq.push_back(std::make_shared<nn::Linear>(4, 4));
  seq.push_back("act", std::make_shared<nn::ReLU>());
  CHECK(seq.size() == 2);
  CHECK(names_of(seq.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias"});
  CHECK_THROWS_AS(seq[2], IndexError);
  CHECK_THROWS_AS(seq.at<nn::Linear>(1), ValueError);
}
