// rt::optim: each optimizer vs a float64 loop reference over three steps, state dicts,
// LR schedules vs PyTorch's values, and gradient clipping.
#include <catch2/catch.hpp>
#include <cmath>

#include "rt/nn/nn.h"
#include "rt/optim/optim.h"
#include "testing.h"

using namespace rt;
using rt::testing::require_close;
using rt::testing::values;

namespace {

constexpr int64_t kN = 6;

Tensor start_param(ScalarType dtype) { return rt::testing::random({2, 3}, dtype, -1, 1, 1).requires_grad_(); }
// Gradient for step k: mixed signs, one exact zero, different every step.
std::vector<double> grad_at(int k) {
  auto g = values(rt::testing::random({kN}, kFloat64, -2, 2, uint64_t(100 + k)));
  g[2] = k == 1 ? 0.0 : g[2];
  return g;
}

struct SgdRef {
  double lr, momentum, dampening, wd;
  bool nesterov;
  std::vector<double> buf;
  void step(std::vector<double>& p, std::vector<double> g) {
    for (size_t i = 0; i < p.size(); ++i) g[i] += wd * p[i];
    if (momentum != 0) {
      if (buf.empty()) {
        buf = g;
      } else {
        for (size_t i = 0; i < p.size(); ++i) buf[i] = momentum * buf[i] + (1 - dampening) * g[i];
      }
      for (size_t i = 0; i < p.size(); ++i) g[i] = nesterov ? g[i] + momentum * buf[i] : buf[i];
    }
    for (size_t i = 0; i < p.size(); ++i) p[i] -= lr * g[i];
  }
};

struct AdamRef {
  double lr, b1, b2, eps, wd;
  bool amsgrad, decoupled;
  std::vector<double> m = std::vector<double>(kN, 0.0), v = m, vmax = m;
  int t = 0;
  void step(std::vector<double>& p, std::vector<double> g) {
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      if (decoupled) p[i] *= 1 - lr * wd;
      else g[i] += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      vmax[i] = std::max(vmax[i], v[i]);
      const double vhat = (amsgrad ? vmax[i] : v[i]) / (1 - std::pow(b2, t));
      p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / (std::sqrt(vhat) + eps);
    }
  }
};

template <class Opt, class Ref>
void run_three_steps(Opt& opt, Tensor& p, Ref& ref, double tol) {
  auto expected = values(p);
  for (int k = 0; k < 3; ++k) {
    auto g = grad_at(k);
    p.set_grad(from_vector(g, {2, 3}).to(p.dtype()));
    opt.step();
    ref.step(expected, g);
    INFO("step " << k + 1);
    require_close(p, from_vector(expected, {2, 3}), tol, tol);
  }
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

template <class S>
std::vector<double> lr_sequence(S& sched, optim::Optimizer& opt, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(opt.lr(0));
    CHECK(sched.get_last_lr()[0] == Approx(opt.lr(0)).epsilon(1e-15));
    sched.step();
  }
  return out;
}

void check_sequence(const std::vector<double>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("epoch " << i);
    CHECK(got[i] == Approx(expected[i]).epsilon(1e-12).margin(1e-15));
  }
}

}  // namespace

TEST_CASE("optim: SGD matches the reference update") {
  struct Case {
    const char* name;
    optim::SGDOptions o;
  };
  const std::vector<Case> cases = {
      {"plain", {.lr = 0.1}},
      {"momentum", {.lr = 0.1, .momentum = 0.9}},
      {"dampening", {.lr = 0.05, .momentum = 0.8, .dampening = 0.3}},
      {"nesterov+weight_decay", {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true}},
      {"weight_decay", {.lr = 0.2, .weight_decay = 0.1}},
  };
  for (const auto& c : cases)
    for (ScalarType dt : {kFloat64, kFloat32}) {
      INFO(c.name << " " << dtype_name(dt));
      Tensor p = start_param(dt);
      optim::SGD opt({p}, c.o);
      SgdRef ref{c.o.lr, c.o.momentum, c.o.dampening, c.o.weight_decay, c.o.nesterov, {}};
      run_three_steps(opt, p, ref, dt == kFloat64 ? 1e-12 : 2e-6);
      CHECK(opt.state(p)->contains("momentum_buffer") == (c.o.momentum != 0));
    }
}

TEST_CASE("optim: SGD momentum by hand") {
  for (bool nesterov : {false, true}) {
    Tensor p = tensor({1.0}).requires_grad_();
    optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9, .nesterov = nesterov});
    std::vector<double> got;
    for (int k = 0; k < 3; ++k) {
      p.set_grad(tensor({1.0}));
      opt.step();
      got.push_back(p.item<double>());
    }
    // buf: 1, 1.9, 2.71; nesterov steps use g + 0.9 * buf: 1.9, 2.71, 3.439.
    const std::vector<double> expected = nesterov ? std::vector<double>{0.81, 0.539, 0.1951} : std::vector<double>{0.9, 0.71, 0.439};
    for (int k = 0; k < 3; ++k) CHECK(got[size_t(k)] == Approx(expected[size_t(k)]).epsilon(1e-14));
  }
}

TEST_CASE("optim: Adam and AdamW match the reference update") {
  struct Case {
    const char* name;
    double lr, b1, b2, eps, wd;
    bool amsgrad, decoupled;
  };
  const std::vector<Case> cases = {
      {"adam", 1e-2, 0.9, 0.999, 1e-8, 0.0, false, false},
      {"adam weight_decay", 5e-2, 0.8, 0.99, 1e-6, 0.1, false, false},
      {"adam amsgrad", 1e-2, 0.9, 0.999, 1e-8, 0.0, true, false},
      {"adamw", 1e-2, 0.9, 0.999, 1e-8, 0.05, false, true},
      {"adamw amsgrad", 3e-2, 0.5, 0.9, 1e-3, 0.2, true, true},
  };
  for (const auto& c : cases)
    for (ScalarType dt : {kFloat64, kFloat32}) {
      INFO(c.name << " " << dtype_name(dt));
      Tensor p = start_param(dt);
      AdamRef ref{c.lr, c.b1, c.b2, c.eps, c.wd, c.amsgrad, c.decoupled};
      const double tol = dt == kFloat64 ? 1e-12 : 2e-6;
      if (c.decoupled) {
        optim::AdamW opt({p}, {.lr = c.lr, .betas = {c.b1, c.b2}, .eps = c.eps, .weight_decay = c.wd, .amsgrad = c.amsgrad});
        run_three_steps(opt, p, ref, tol);
        CHECK(opt.state(p)->at("step").item<double>() == 3.0);
      } else {
        optim::Adam opt({p}, {.lr = c.lr, .betas = {c.b1, c.b2}, .eps = c.eps, .weight_decay = c.wd, .amsgrad = c.amsgrad});
        run_three_steps(opt, p, ref, tol);
        const auto* st = opt.state(p);
        CHECK(st->keys() == (c.amsgrad ? std::vector<std::string>{"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
                                       : std::vector<std::string>{"step", "exp_avg", "exp_avg_sq"}));
        CHECK(st->at("step").dtype() == kFloat32);
      }
    }
}

TEST_CASE("optim: adam_step_ and sgd_step_ with caller-held state match the reference update") {
  for (bool decoupled : {false, true}) {
    INFO((decoupled ? "adamw" : "adam") << " amsgrad");
    Tensor p = start_param(kFloat64).detach();
    Tensor m = zeros_like(p), v = zeros_like(p), vmax = zeros_like(p);
    AdamRef ref{3e-2, 0.8, 0.95, 1e-6, 0.1, true, decoupled};
    auto expected = values(p);
    for (int k = 0; k < 3; ++k) {
      const auto g = grad_at(k);
      optim::adam_step_(p, m, v, vmax, from_vector(g, {2, 3}),
                        {.lr = 3e-2, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1,
                         .decoupled_weight_decay = decoupled},
                        double(k + 1));
      ref.step(expected, g);
      require_close(p, from_vector(expected, {2, 3}), 1e-12, 1e-12);
    }
  }
  Tensor p = start_param(kFloat64).detach(), buf = empty_like(p);
  SgdRef ref{0.1, 0.9, 0.0, 0.01, true, {}};
  auto expected = values(p);
  for (int k = 0; k < 3; ++k) {
    const auto g = grad_at(k);
    optim::sgd_step_(p, buf, from_vector(g, {2, 3}), {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true},
                     /*first=*/k == 0);
    ref.step(expected, g);
    require_close(p, from_vector(expected, {2, 3}), 1e-12, 1e-12);
  }
  CHECK_THAT(message_of([&] { optim::sgd_step_(p, Tensor(), p, {.lr = 0.1, .momentum = 0.9}, false); }),
             Catch::Matchers::Contains("needs a momentum buffer"));
  CHECK_THAT(message_of([&] { optim::adam_step_(p, p, p, Tensor(), p, {}, 0.0); }),
             Catch::Matchers::Contains("step must be the count after incrementing it"));
}

TEST_CASE("optim: Adam's first step moves each weight by lr * sign(grad)") {
  Tensor p = tensor({1.0, -2.0, 3.0}).requires_grad_();
  optim::Adam opt({p}, {.lr = 0.1});
  p.set_grad(tensor({0.5, -4.0, 0.0}));
  opt.step();
  const auto v = values(p);
  CHECK(v[0] == Approx(1.0 - 0.1 * 0.5 / (0.5 + 1e-8)).epsilon(1e-14));
  CHECK(v[1] == Approx(-2.0 + 0.1 * 4.0 / (4.0 + 1e-8)).epsilon(1e-14));
  CHECK(v[2] == 3.0);
}

TEST_CASE("optim: zero_grad, groups, skipped parameters and validation") {
  Tensor a = ones({2}).requires_grad_(), b = ones({3}).requires_grad_(), c = ones({1}).requires_grad_();
  optim::SGD opt(std::vector<optim::SGD::ParamGroup>{{{a, b}, {.lr = 0.1}}, {{c}, {.lr = 1.0, .momentum = 0.5}}});
  CHECK(opt.num_param_groups() == 2);
  CHECK(opt.lr(1) == 1.0);
  a.set_grad(ones({2}));
  c.set_grad(ones({1}));
  opt.step();  // b has no grad: untouched
  require_close(a, full({2}, 0.9), 1e-15);
  require_close(b, ones({3}), 0);
  require_close(c, zeros({1}), 0, 1e-15);
  opt.zero_grad(false);
  require_close(a.grad(), zeros({2}), 0);
  opt.zero_grad();
  CHECK(!a.grad().defined());
  opt.set_lr(0.5);
  CHECK(opt.lr(0) == 0.5);
  CHECK(opt.lr(1) == 0.5);
  CHECK_THROWS_AS(opt.lr(2), IndexError);

  CHECK_THROWS_AS(optim::SGD({a}, {.lr = 0.1, .nesterov = true}), ValueError);
  CHECK_THROWS_AS(optim::SGD({a}, {.lr = -1}), ValueError);
  CHECK_THROWS_AS(optim::Adam({a}, {.betas = {1.0, 0.9}}), ValueError);
  CHECK_THROWS_AS(optim::AdamW({a}, {.eps = -1}), ValueError);
  CHECK_THROWS_AS(optim::Adam(TensorList{}), ValueError);
  CHECK_THROWS_AS(optim::Adam({a, a}), ValueError);
  CHECK_THROWS_AS(optim::Adam({a * 2}), ValueError);  // not a leaf
  CHECK(message_of([&] { optim::Adam({a}, {.betas = {0.9, 1.5}}); }).find("Adam") != std::string::npos);
}

TEST_CASE("optim: optimizer state is allocated as OptimizerState memory") {
  struct Rec : MemoryObserver {
    size_t bytes = 0;
    void on_memory_event(const MemoryEvent& e) override {
      if (e.is_alloc && e.category == MemoryCategory::OptimizerState) bytes += e.bytes;
    }
  } rec;
  Tensor p = zeros({1000}).requires_grad_();
  optim::Adam opt({p});
  p.set_grad(ones({1000}));
  add_memory_observer(&rec);
  opt.step();
  remove_memory_observer(&rec);
  CHECK(rec.bytes >= 2 * 1000 * sizeof(float));
}

TEST_CASE("optim: state_dict flattens to PyTorch-like keys and round-trips") {
  auto make = [](const Tensor& w, const Tensor& b) {
    return std::make_unique<optim::Adam>(std::vector<optim::Adam::ParamGroup>{
        {{w}, {.lr = 0.01, .amsgrad = true}}, {{b}, {.lr = 0.02, .betas = {0.8, 0.9}}}});
  };
  Tensor w = start_param(kFloat32), b = tensor({0.5f, -0.5f}).requires_grad_();
  auto opt = make(w, b);
  for (int k = 0; k < 2; ++k) {
    w.set_grad(from_vector(grad_at(k), {2, 3}).to(kFloat32));
    b.set_grad(tensor({0.1f * float(k + 1), -0.3f}));
    opt->step();
  }
  nn::StateDict flat = opt->state_dict().flatten();
  CHECK(flat.keys() == std::vector<std::string>{
                           "state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq",
                           "state.1.step", "state.1.exp_avg", "state.1.exp_avg_sq",
                           "param_groups.0.lr", "param_groups.0.betas", "param_groups.0.eps",
                           "param_groups.0.weight_decay", "param_groups.0.amsgrad", "param_groups.0.params",
                           "param_groups.1.lr", "param_groups.1.betas", "param_groups.1.eps",
                           "param_groups.1.weight_decay", "param_groups.1.amsgrad", "param_groups.1.params"});
  CHECK(flat.at("param_groups.1.lr").item<double>() == 0.02);
  CHECK(values(flat.at("param_groups.1.betas")) == std::vector<double>{0.8, 0.9});
  CHECK(values(flat.at("param_groups.1.params")) == std::vector<double>{1});
  CHECK(flat.at("state.1.step").item<double>() == 2.0);

  // A fresh optimizer over copies of the parameters continues exactly where the first one is.
  Tensor w2 = w.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
  auto opt2 = make(w2, b2);
  opt2->set_lr(0, 123.0);
  opt2->load_state_dict(optim::OptimizerStateDict::unflatten(flat));
  CHECK(opt2->lr(0) == 0.01);
  CHECK(opt2->options(1).betas.first == 0.8);
  CHECK(!opt2->state(w2)->at("exp_avg").is_same(opt->state(w)->at("exp_avg")));  // copied, not aliased
  w.set_grad(from_vector(grad_at(2), {2, 3}).to(kFloat32));
  w2.set_grad(from_vector(grad_at(2), {2, 3}).to(kFloat32));
  b.set_grad(tensor({1.0f, 1.0f}));
  b2.set_grad(tensor({1.0f, 1.0f}));
  opt->step();
  opt2->step();
  require_close(w2, w, 0, 0);
  require_close(b2, b, 0, 0);

  optim::SGD sgd({w});
  CHECK_THROWS_AS(sgd.load_state_dict(opt->state_dict()), ValueError);  // 2 groups vs 1
  auto bad = opt->state_dict();
  bad.state[0].insert("exp_avg", zeros({7}));
  CHECK_THROWS_AS(opt2->load_state_dict(bad), ShapeError);
  CHECK_THROWS_AS(optim::OptimizerStateDict::unflatten({{"foo.0.lr", zeros({})}}), ValueError);
  CHECK_THROWS_AS(optim::OptimizerStateDict::unflatten({{"state.x.step", zeros({})}}), ValueError);
}

TEST_CASE("optim: LR schedulers produce PyTorch's sequences") {
  Tensor p = ones({1}).requires_grad_();
  SECTION("StepLR") {
    optim::SGD opt({p}, {.lr = 0.1});
    optim::StepLR sched(opt, 3, 0.5);
    check_sequence(lr_sequence(sched, opt, 10), {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125});
  }
  SECTION("CosineAnnealingLR, past T_max too") {
    optim::SGD opt({p}, {.lr = 0.1});
    optim::CosineAnnealingLR sched(opt, 10, 0.001);
    check_sequence(lr_sequence(sched, opt, 13),
                   {0.1, 0.09757729755661011, 0.0905463412215599, 0.07959536998847742, 0.0657963412215599, 0.0505,
                    0.03520365877844011, 0.021404630011522586, 0.010453658778440109, 0.0034227024433899004, 0.001,
                    0.003422702443389889, 0.010453658778440095});
  }
  SECTION("LinearLR warm-up") {
    optim::Adam opt({p}, {.lr = 0.1});
    optim::LinearLR sched(opt, 0.25, 1.0, 4);
    check_sequence(lr_sequence(sched, opt, 6), {0.025, 0.043750000000000004, 0.0625, 0.08125, 0.1, 0.1});
    CHECK(opt.initial_lr(0) == 0.1);
  }
  SECTION("SequentialLR: warm-up then cosine") {
    optim::SGD opt({p}, {.lr = 1.0});
    auto warm = std::make_shared<optim::LinearLR>(opt, 0.1, 1.0, 3);
    auto cosine = std::make_shared<optim::CosineAnnealingLR>(opt, 5);
    optim::SequentialLR sched(opt, {warm, cosine}, {3});
    check_sequence(lr_sequence(sched, opt, 11),
                   {0.1, 0.4, 0.7, 1.0, 0.9045084971874737, 0.6545084971874737, 0.34549150281252633,
                    0.09549150281252633, 0.0, 0.09549150281252622, 0.3454915028125262});
    CHECK_THROWS_AS(optim::SequentialLR(opt, {warm, cosine}, {}), ValueError);
  }
  SECTION("two groups, state_dict resume, validation") {
    optim::SGD opt(std::vector<optim::SGD::ParamGroup>{{{p}, {.lr = 0.1}}, {{ones({1}).requires_grad_()}, {.lr = 0.4}}});
    optim::StepLR sched(opt, 2, 0.1);
    sched.step();
    sched.step();
    CHECK(sched.get_last_lr()[0] == Approx(0.01));
    CHECK(sched.get_last_lr()[1] == Approx(0.04));
    auto sd = sched.state_dict();
    CHECK(sd.at("last_epoch").item<int64_t>() == 2);
    optim::StepLR resumed(opt, 2, 0.1, /*last_epoch=*/1);  // initial_lr is set: resuming works
    CHECK(resumed.last_epoch() == 2);
    resumed.load_state_dict(sd);
    resumed.step();
    resumed.step();
    CHECK(opt.lr(1) == Approx(0.004));
    optim::SGD fresh({ones({1}).requires_grad_()}, {.lr = 0.1});
    CHECK_THROWS_AS(optim::StepLR(fresh, 2, 0.1, 3), ValueError);
    CHECK_THROWS_AS(optim::LinearLR(fresh, 0.0), ValueError);
    CHECK_THROWS_AS(optim::CosineAnnealingLR(fresh, 0), ValueError);
  }
}

TEST_CASE("optim: clip_grad_norm_ and clip_grad_value_") {
  Tensor a = zeros({2}).requires_grad_(), b = zeros({2, 2}).requires_grad_(), none = zeros({3}).requires_grad_();
  auto reset = [&] {
    a.set_grad(tensor({3.0f, 0.0f}));
    b.set_grad(tensor({0.0f, 4.0f, 0.0f, 12.0f}, {2, 2}));
  };
  reset();
  const double total = nn::clip_grad_norm_({a, b, none}, 6.5);  // sqrt(9 + 16 + 144) = 13
  CHECK(total == Approx(13.0).epsilon(1e-6));
  const double coef = 6.5 / (13.0 + 1e-6);
  require_close(a.grad(), tensor({float(3 * coef), 0.0f}), 1e-6);
  require_close(b.grad(), tensor({0.0f, float(4 * coef), 0.0f, float(12 * coef)}, {2, 2}), 1e-6);
  CHECK(!none.grad().defined());

  reset();
  CHECK(nn::clip_grad_norm_({a, b}, 100.0) == Approx(13.0).epsilon(1e-6));
  require_close(a.grad(), tensor({3.0f, 0.0f}), 1e-6);  // below max_norm: unchanged

  reset();
  CHECK(nn::clip_grad_norm_({a, b}, 6.0, INFINITY) == Approx(12.0));
  require_close(b.grad(), tensor({0.0f, float(4 * 6 / (12 + 1e-6)), 0.0f, float(12 * 6 / (12 + 1e-6))}, {2, 2}), 1e-6);

  reset();
  CHECK(nn::clip_grad_norm_({a, b}, 100.0, 1.0) == Approx(19.0));

  a.set_grad(tensor({NAN, 1.0f}));
  CHECK_THROWS_AS(nn::clip_grad_norm_({a}, 1.0, 2.0, true), ValueError);
  CHECK(nn::clip_grad_norm_({none}, 1.0) == 0.0);

  reset();
  nn::clip_grad_value_({a, b}, 3.5);
  require_close(b.grad(), tensor({0.0f, 3.5f, 0.0f, 3.5f}, {2, 2}), 0);
  require_close(a.grad(), tensor({3.0f, 0.0f}), 0);
}

TEST_CASE("optim: training a tiny regression converges") {
  manual_seed(7);
  nn::Linear model(3, 1);
  Tensor x = rt::testing::random({64, 3}, kFloat32, -1, 1, 50);
  Tensor y = (x * tensor({1.5f, -2.0f, 0.5f})).sum({1}, true) + 0.3;
  optim::AdamW opt(model.parameters(), {.lr = 0.05, .weight_decay = 0.0});
  optim::CosineAnnealingLR sched(opt, 300, 0.001);
  double loss = 0;
  for (int i = 0; i < 300; ++i) {
    opt.zero_grad();
    Tensor l = rt::mse_loss(model(x), y);
    l.backward();
    opt.step();
    sched.step();
    loss = l.item<double>();
  }
  CHECK(loss < 1e-4);
  require_close(model.bias, tensor({0.3f}), 0, 1e-2);
}
