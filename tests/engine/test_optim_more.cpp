// rt::optim, the optimizers and schedulers added for issue 23: RMSprop, Adagrad, Adadelta, Adamax,
// NAdam and RAdam vs float64 loop references over three steps, their state dicts and validation;
// ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts, ChainedScheduler, OneCycleLR and CyclicLR
// (lr and momentum) vs PyTorch 1.13's values. tests/python/test_optimizers_more.py and
// test_lr_schedulers_more.py compare the same code with torch over longer runs.
#include <catch2/catch.hpp>
#include <cmath>

#include "rt/optim/optim.h"
#include "testing.h"

using namespace rt;
using rt::testing::require_close;
using rt::testing::values;

namespace {

constexpr size_t kN = 6;
using Vec = std::vector<double>;

Tensor start_param(ScalarType dtype) { return rt::testing::random({2, 3}, dtype, -1, 1, 7).requires_grad_(); }
Vec grad_at(int k) { return values(rt::testing::random({int64_t(kN)}, kFloat64, -2, 2, uint64_t(300 + k))); }

// Runs three steps of `opt` on p and of `ref(p, g)` on a float64 copy; they must agree to `tol`.
template <class Opt, class Ref>
void check_three_steps(Opt& opt, Tensor& p, Ref ref, double tol) {
  Vec expected = values(p);
  for (int k = 0; k < 3; ++k) {
    const Vec g = grad_at(k);
    p.set_grad(from_vector(g, {2, 3}).to(p.dtype()));
    opt.step();
    ref(expected, g, k + 1);
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
void check_schedule(S& sched, optim::Optimizer& opt, const Vec& lrs, const Vec& momentums = {}) {
  for (size_t i = 0; i < lrs.size(); ++i) {
    INFO("epoch " << i);
    CHECK(opt.lr(0) == Approx(lrs[i]).epsilon(1e-12).margin(1e-15));
    CHECK(sched.get_last_lr()[0] == Approx(lrs[i]).epsilon(1e-12).margin(1e-15));
    if (!momentums.empty()) CHECK(*opt.momentum(0) == Approx(momentums[i]).epsilon(1e-12));
    sched.step();
  }
}

}  // namespace

TEST_CASE("optim: RMSprop matches the reference update") {
  for (const bool centered : {false, true})
    for (const double momentum : {0.0, 0.7}) {
      DYNAMIC_SECTION("centered " << centered << ", momentum " << momentum) {
        const optim::RMSpropOptions o{.lr = 0.01, .alpha = 0.9, .eps = 1e-6, .weight_decay = 0.05,
                                      .momentum = momentum, .centered = centered, .maximize = centered};
        Tensor p = start_param(kFloat64);
        optim::RMSprop opt({p}, o);
        Vec v(kN, 0.0), a(kN, 0.0), b(kN, 0.0);
        check_three_steps(opt, p, [&](Vec& x, Vec g, int) {
          for (size_t i = 0; i < kN; ++i) {
            if (o.maximize) g[i] = -g[i];
            g[i] += o.weight_decay * x[i];
            v[i] = o.alpha * v[i] + (1 - o.alpha) * g[i] * g[i];
            a[i] = o.alpha * a[i] + (1 - o.alpha) * g[i];
            const double denom = std::sqrt(centered ? v[i] - a[i] * a[i] : v[i]) + o.eps;
            b[i] = momentum * b[i] + g[i] / denom;
            x[i] -= o.lr * (momentum > 0 ? b[i] : g[i] / denom);
          }
        }, 1e-12);
        CHECK(opt.state(p)->contains("grad_avg") == centered);
        CHECK(opt.state(p)->contains("momentum_buffer") == (momentum > 0));
      }
    }
}

TEST_CASE("optim: Adagrad, Adadelta and Adamax match the reference updates") {
  SECTION("Adagrad with lr decay, weight decay and an initial accumulator") {
    const optim::AdagradOptions o{.lr = 0.1, .lr_decay = 0.1, .weight_decay = 0.02, .initial_accumulator_value = 0.3};
    Tensor p = start_param(kFloat64);
    optim::Adagrad opt({p}, o);
    CHECK(opt.state(p)->at("step").item<double>() == 0.0);  // created up front, as PyTorch does
    Vec s(kN, o.initial_accumulator_value);
    check_three_steps(opt, p, [&](Vec& x, Vec g, int t) {
      const double clr = o.lr / (1 + (t - 1) * o.lr_decay);
      for (size_t i = 0; i < kN; ++i) {
        g[i] += o.weight_decay * x[i];
        s[i] += g[i] * g[i];
        x[i] -= clr * g[i] / (std::sqrt(s[i]) + o.eps);
      }
    }, 1e-12);
  }
  SECTION("Adadelta, maximizing") {
    const optim::AdadeltaOptions o{.lr = 0.5, .rho = 0.8, .eps = 1e-5, .weight_decay = 0.01, .maximize = true};
    Tensor p = start_param(kFloat64);
    optim::Adadelta opt({p}, o);
    Vec v(kN, 0.0), u(kN, 0.0);
    check_three_steps(opt, p, [&](Vec& x, Vec g, int) {
      for (size_t i = 0; i < kN; ++i) {
        g[i] = -g[i] + o.weight_decay * x[i];
        v[i] = o.rho * v[i] + (1 - o.rho) * g[i] * g[i];
        const double delta = std::sqrt(u[i] + o.eps) / std::sqrt(v[i] + o.eps) * g[i];
        u[i] = o.rho * u[i] + (1 - o.rho) * delta * delta;
        x[i] -= o.lr * delta;
      }
    }, 1e-12);
  }
  SECTION("Adamax in float32") {
    const optim::AdamaxOptions o{.lr = 0.02, .betas = {0.8, 0.95}, .weight_decay = 0.01};
    Tensor p = start_param(kFloat32);
    optim::Adamax opt({p}, o);
    Vec m(kN, 0.0), u(kN, 0.0);
    check_three_steps(opt, p, [&](Vec& x, Vec g, int t) {
      for (size_t i = 0; i < kN; ++i) {
        g[i] += o.weight_decay * x[i];
        m[i] = o.betas.first * m[i] + (1 - o.betas.first) * g[i];
        u[i] = std::max(o.betas.second * u[i], std::abs(g[i]) + o.eps);
        x[i] -= o.lr / (1 - std::pow(o.betas.first, t)) * m[i] / u[i];
      }
    }, 1e-5);
  }
}

TEST_CASE("optim: NAdam and RAdam match the reference updates") {
  SECTION("NAdam, with PyTorch 1.13's float32 momentum product") {
    const optim::NAdamOptions o{.lr = 0.01, .betas = {0.85, 0.99}, .weight_decay = 0.01, .momentum_decay = 0.01};
    Tensor p = start_param(kFloat64);
    optim::NAdam opt({p}, o);
    Vec m(kN, 0.0), v(kN, 0.0);
    float product = 1.0f;
    check_three_steps(opt, p, [&](Vec& x, Vec g, int t) {
      const double b1 = o.betas.first, b2 = o.betas.second;
      const double mu = b1 * (1 - 0.5 * std::pow(0.96, t * o.momentum_decay));
      const double mu_next = b1 * (1 - 0.5 * std::pow(0.96, (t + 1) * o.momentum_decay));
      product *= float(mu);
      const float product_next = product * float(mu) * float(mu_next);
      for (size_t i = 0; i < kN; ++i) {
        g[i] += o.weight_decay * x[i];
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        const double denom = std::sqrt(v[i] / (1 - std::pow(b2, t))) + o.eps;
        x[i] -= o.lr * (1 - mu) / (1 - double(product)) * g[i] / denom;
        x[i] -= o.lr * mu_next / (1 - double(product_next)) * m[i] / denom;
      }
    }, 1e-12);
    CHECK(opt.state(p)->at("mu_product").dtype() == kFloat32);
  }
  for (const double beta2 : {0.999, 0.5}) {  // 0.5: rho_t > 5 from the first step, the rectified branch
    DYNAMIC_SECTION("RAdam, beta2 " << beta2) {
      const optim::RAdamOptions o{.lr = 0.01, .betas = {0.9, beta2}, .weight_decay = 0.01};
      Tensor p = start_param(kFloat64);
      optim::RAdam opt({p}, o);
      Vec m(kN, 0.0), v(kN, 0.0);
      check_three_steps(opt, p, [&](Vec& x, Vec g, int t) {
        const double b1 = o.betas.first, b2 = o.betas.second, bc2 = 1 - std::pow(b2, t);
        const double rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 * t * std::pow(b2, t) / bc2;
        for (size_t i = 0; i < kN; ++i) {
          g[i] += o.weight_decay * x[i];
          m[i] = b1 * m[i] + (1 - b1) * g[i];
          v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
          const double m_hat = m[i] / (1 - std::pow(b1, t));
          if (rho_t > 5) {
            const double r = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
            x[i] -= m_hat * o.lr * std::sqrt(bc2) / (std::sqrt(v[i]) + o.eps) * r;
          } else {
            x[i] -= m_hat * o.lr;
          }
        }
      }, 1e-12);
    }
  }
}

TEST_CASE("optim: the new optimizers' state dicts use PyTorch's names and round-trip") {
  Tensor w = start_param(kFloat32);
  optim::RMSprop opt({w}, {.momentum = 0.9, .centered = true});
  w.set_grad(from_vector(grad_at(0), {2, 3}).to(kFloat32));
  opt.step();
  nn::StateDict flat = opt.state_dict().flatten();
  CHECK(flat.keys() == std::vector<std::string>{"state.0.step", "state.0.square_avg", "state.0.momentum_buffer",
                                                "state.0.grad_avg", "param_groups.0.lr", "param_groups.0.alpha",
                                                "param_groups.0.eps", "param_groups.0.weight_decay",
                                                "param_groups.0.momentum", "param_groups.0.centered",
                                                "param_groups.0.maximize", "param_groups.0.params"});
  Tensor w2 = w.detach().clone().requires_grad_();
  optim::RMSprop opt2({w2}, {.lr = 5.0});
  opt2.load_state_dict(optim::OptimizerStateDict::unflatten(flat));
  CHECK(opt2.options(0).centered);
  CHECK(opt2.lr(0) == Approx(0.01));
  for (int k = 1; k < 3; ++k) {
    w.set_grad(from_vector(grad_at(k), {2, 3}).to(kFloat32));
    w2.set_grad(from_vector(grad_at(k), {2, 3}).to(kFloat32));
    opt.step();
    opt2.step();
  }
  require_close(w2, w, 0, 0);

  Tensor q = start_param(kFloat64);
  optim::NAdam nadam({q});
  q.set_grad(ones({2, 3}, kFloat64));
  nadam.step();
  CHECK(nadam.state_dict().flatten().keys() ==
        std::vector<std::string>{"state.0.step", "state.0.mu_product", "state.0.exp_avg", "state.0.exp_avg_sq",
                                 "param_groups.0.lr", "param_groups.0.betas", "param_groups.0.eps",
                                 "param_groups.0.weight_decay", "param_groups.0.momentum_decay",
                                 "param_groups.0.params"});
}

TEST_CASE("optim: the new optimizers validate their options") {
  Tensor p = start_param(kFloat32);
  CHECK_THAT(message_of([&] { optim::RMSprop({p}, {.lr = -0.5}); }),
             Catch::Contains("RMSprop: invalid learning rate: -0.5"));
  CHECK_THAT(message_of([&] { optim::RMSprop({p}, {.alpha = -1}); }), Catch::Contains("invalid alpha value"));
  CHECK_THAT(message_of([&] { optim::Adagrad({p}, {.lr_decay = -1}); }), Catch::Contains("invalid lr_decay value"));
  CHECK_THAT(message_of([&] { optim::Adadelta({p}, {.rho = 1.5}); }),
             Catch::Contains("Adadelta: invalid rho value: 1.5"));
  CHECK_THAT(message_of([&] { optim::Adamax({p}, {.betas = {1.0, 0.9}}); }),
             Catch::Contains("invalid beta parameter at index 0: 1"));
  CHECK_THAT(message_of([&] { optim::NAdam({p}, {.momentum_decay = -1}); }),
             Catch::Contains("invalid momentum_decay value"));
  CHECK_THAT(message_of([&] { optim::RAdam({p}, {.betas = {0.9, -0.1}}); }),
             Catch::Contains("invalid beta parameter at index 1: -0.1"));
  CHECK_THROWS_AS(optim::RAdam({p}, {.eps = -1}), ValueError);
  CHECK_THROWS_AS(optim::rmsprop_step_(p, p, p, Tensor(), Tensor(), {.centered = true}), ValueError);
  CHECK_THROWS_AS(optim::nadam_step_(p, p, p, p, Tensor(), {}, 1.0), ValueError);
}

TEST_CASE("optim: the new LR schedulers produce PyTorch's sequences") {
  Tensor p = ones({1}).requires_grad_();
  optim::SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  SECTION("ConstantLR") {
    optim::ConstantLR sched(sgd, 0.5, 3);
    check_schedule(sched, sgd, {0.05, 0.05, 0.05, 0.1, 0.1, 0.1});
  }
  SECTION("PolynomialLR") {
    optim::PolynomialLR sched(sgd, 4, 2.0);
    check_schedule(sched, sgd, {0.1, 0.05625, 0.024999999999999998, 0.0062499999999999995, 0.0, 0.0});
  }
  SECTION("CosineAnnealingWarmRestarts, whole and fractional epochs") {
    optim::CosineAnnealingWarmRestarts sched(sgd, 3, 2, 0.01);
    check_schedule(sched, sgd,
                   {0.1, 0.0775, 0.032500000000000015, 0.1, 0.09397114317029975, 0.0775, 0.05500000000000001,
                    0.032500000000000015, 0.01602885682970026, 0.1, 0.09846666218300808, 0.09397114317029975});
    const std::pair<double, double> fractional[] = {
        {0.5, 0.09397114317029975}, {3.25, 0.09961501876182148}, {9.0, 0.1}, {10.5, 0.0965745789630079}};
    for (auto [epoch, lr] : fractional) {
      sched.step_to_fraction(epoch);
      CHECK(sgd.lr(0) == Approx(lr).epsilon(1e-12));
    }
    CHECK(sched.last_epoch() == 10);
  }
  SECTION("ChainedScheduler") {
    auto constant = std::make_shared<optim::ConstantLR>(sgd, 0.1, 2);
    auto step = std::make_shared<optim::StepLR>(sgd, 2, 0.5);
    optim::ChainedScheduler sched(sgd, {constant, step});
    check_schedule(sched, sgd, {0.010000000000000002, 0.010000000000000002, 0.05000000000000001,
                                0.05000000000000001, 0.025000000000000005, 0.025000000000000005});
  }
  SECTION("OneCycleLR with SGD's momentum") {
    optim::OneCycleLR sched(sgd, 1.0, 10);
    check_schedule(sched, sgd,
                   {0.040000000000000036, 0.52, 1.0, 0.9504846320134737, 0.8117456539497631, 0.6112620219362893,
                    0.38874197806371075, 0.18825834605023697, 0.049519367986526286, 4e-06},
                   {0.95, 0.8999999999999999, 0.85, 0.854951556604879, 0.8688255099070633, 0.8888739533021842,
                    0.9111260466978157, 0.9311744900929366, 0.945048443395121, 0.95});
    CHECK_THROWS_AS(sched.step(), ValueError);  // past total_steps
  }
  SECTION("OneCycleLR three-phase, linear, with Adam's beta1") {
    optim::Adam adam({p}, {.lr = 0.1});
    optim::OneCycleLR sched(adam, 1.0, 10, {.linear_anneal = true, .three_phase = true});
    check_schedule(sched, adam,
                   {0.04, 0.52, 1.0, 0.52, 0.040000000000000036, 0.032000799999999996, 0.024001599999999998,
                    0.0160024, 0.008003199999999995, 3.9999999999970615e-06},
                   {0.95, 0.8999999999999999, 0.85, 0.8999999999999999, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95});
    CHECK(adam.options(0).betas.second == 0.999);
  }
  SECTION("CyclicLR triangular2 and exp_range with momentum") {
    optim::CyclicLR tri(sgd, 0.01, 0.1, {.step_size_up = 2, .step_size_down = 3,
                                         .mode = optim::CyclicOptions::Mode::Triangular2});
    check_schedule(tri, sgd,
                   {0.01, 0.055, 0.09999999999999999, 0.06999999999999999, 0.039999999999999994, 0.01,
                    0.03250000000000002, 0.055, 0.039999999999999994, 0.025000000000000015, 0.01,
                    0.021250000000000012},
                   {0.9, 0.8500000000000001, 0.8, 0.8333333333333334, 0.8666666666666667, 0.9, 0.875,
                    0.8500000000000001, 0.8666666666666667, 0.8833333333333333, 0.9, 0.8875000000000001});
    optim::SGD sgd2({ones({1}).requires_grad_()}, {.lr = 0.1, .momentum = 0.9});
    optim::CyclicLR exp(sgd2, 0.01, 0.1, {.step_size_up = 2, .mode = optim::CyclicOptions::Mode::ExpRange,
                                          .gamma = 0.9});
    check_schedule(exp, sgd2,
                   {0.01, 0.05050000000000001, 0.0829, 0.04280500000000001, 0.01, 0.03657205000000001,
                    0.05782969000000001, 0.03152336050000001},
                   {0.9, 0.855, 0.8190000000000001, 0.86355, 0.9, 0.8704755000000001, 0.8468559,
                    0.8760851550000001});
  }
  SECTION("validation") {
    optim::Adagrad adagrad({p});
    CHECK_THAT(message_of([&] { optim::OneCycleLR(adagrad, 1.0, 10); }), Catch::Contains("cycle_momentum"));
    CHECK_NOTHROW(optim::OneCycleLR(adagrad, 1.0, 10, {.cycle_momentum = false}));
    CHECK_THROWS_AS(optim::OneCycleLR(sgd, 1.0, 0), ValueError);
    CHECK_THROWS_AS(optim::ConstantLR(sgd, 1.5), ValueError);
    CHECK_THROWS_AS(optim::PolynomialLR(sgd, 0), ValueError);
    CHECK_THROWS_AS(optim::CosineAnnealingWarmRestarts(sgd, 0), ValueError);
    CHECK_THROWS_AS(optim::CyclicLR(sgd, 0.01, 0.1, {.step_size_up = 0}), ValueError);
    optim::SGD other({ones({1}).requires_grad_()}, {.lr = 0.1});
    auto foreign = std::make_shared<optim::ConstantLR>(other);
    CHECK_THROWS_AS(optim::ChainedScheduler(sgd, {foreign}), ValueError);
  }
}
