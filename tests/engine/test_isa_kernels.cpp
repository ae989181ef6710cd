// The per-level CPU kernels (kernels/cpu/isa_kernels.h): the level choice, the math functions'
// accuracy against float64 at every level this CPU runs, the same bits from every level for the
// arithmetic and the optimizer updates, and the fused optimizers against the chain of ops.
// ctest also runs the [capability_env] case under RT_CPU_CAPABILITY=default, avx2 and avx512.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu/cpu_capability.h"
#include "cpu/isa_kernels.h"
#include "rt/cpu_capability.h"
#include "rt/optim/functional.h"
#include "rt/rt.h"
#include "cpu_levels.h"
#include "testing.h"

using rt::cpu::CpuCapability;
using rt::testing::LevelGuard;
using rt::testing::supported_levels;

namespace {

// Distance in float ulps of the reference (at its magnitude) between got and ref.
double ulps(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e30;
  const float rf = float(ref);  // inf beyond the float range
  if (std::isinf(rf)) return got == rf ? 0.0 : 1e30;
  if (std::isnan(got) || std::isinf(got)) return 1e30;
  const float a = std::fabs(rf);
  const double ulp = double(std::nextafter(a, std::numeric_limits<float>::infinity())) - double(a);
  return std::fabs(double(got) - ref) / ulp;
}

// Edge cases and a sweep of magnitudes from subnormal to huge, both signs.
std::vector<float> sweep() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.f, -0.f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f, 1e-30f, 3e38f, -3e38f,
                          1e30f, -1e30f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), 88.7f, 89.f, -103.f,
                          -88.f, 0.625f, 9.f, -9.f, 20.f, -20.f};
  for (double m = 1e-7; m < 200.0; m *= 1.0137) {
    x.push_back(float(m));
    x.push_back(float(-m));
  }
  return x;
}

bool same_bits(const rt::Tensor& a, const rt::Tensor& b) {
  return a.sizes() == b.sizes() && std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(),
                                                 size_t(a.numel()) * rt::element_size(a.dtype())) == 0;
}

double sigmoid64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double gelu64(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double gelu_tanh64(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

struct UnaryCase {
  const char* name;
  rt::cpu::VecUnary op;
  double (*ref)(double);
  double max_ulps;  // over inputs where the float64 result is a normal float (subnormal: see the test)
  double max_abs;   // or within this absolute error (cancellation in gelu's tails)
};

const UnaryCase kUnaryCases[] = {
    {"exp", rt::cpu::VecUnary::Exp, [](double x) { return std::exp(x); }, 1.0, 0.0},
    {"log", rt::cpu::VecUnary::Log, [](double x) { return std::log(x); }, 1.0, 0.0},
    {"tanh", rt::cpu::VecUnary::Tanh, [](double x) { return std::tanh(x); }, 1.0, 0.0},
    {"sigmoid", rt::cpu::VecUnary::Sigmoid, sigmoid64, 3.0, 0.0},
    {"relu", rt::cpu::VecUnary::Relu, [](double x) { return x < 0 ? 0.0 : x; }, 0.0, 0.0},
    {"silu", rt::cpu::VecUnary::Silu, [](double x) { return x * sigmoid64(x); }, 4.0, 0.0},  // NaN at -inf, as PyTorch
    {"gelu", rt::cpu::VecUnary::Gelu, gelu64, 4.0, 2e-7},
    {"gelu_tanh", rt::cpu::VecUnary::GeluTanh, gelu_tanh64, 4.0, 2e-7},
};

}  // namespace

TEST_CASE("cpu capability: environment values select a level, too high or unknown ones fall back with a warning",
          "[isa]") {
  std::string w;
  CHECK(rt::cpu::choose_capability(nullptr, CpuCapability::Avx512, w) == CpuCapability::Avx512);
  CHECK(w.empty());
  CHECK(rt::cpu::choose_capability("", CpuCapability::Avx2, w) == CpuCapability::Avx2);
  CHECK(rt::cpu::choose_capability("AVX2", CpuCapability::Avx512, w) == CpuCapability::Avx2);
  CHECK(w.empty());
  CHECK(rt::cpu::choose_capability("Default", CpuCapability::Avx512, w) == CpuCapability::Default);
  CHECK(rt::cpu::choose_capability("avx512", CpuCapability::Avx2, w) == CpuCapability::Avx2);
  CHECK(w.find("supports up to AVX2") != std::string::npos);
  CHECK(w.find("AVX512") != std::string::npos);
  CHECK(rt::cpu::choose_capability("sse9", CpuCapability::Avx2, w) == CpuCapability::Avx2);
  CHECK(w.find("ignoring RT_CPU_CAPABILITY=sse9") != std::string::npos);
}

TEST_CASE("cpu capability: the chosen level runs on this CPU and tables exist for every level", "[isa]") {
  CHECK(int(rt::cpu::cpu_capability()) <= int(rt::cpu::highest_supported_capability()));
  CHECK(rt::cpu_capability() == rt::cpu::capability_name(rt::cpu::cpu_capability()));
  for (int c = 0; c < rt::cpu::kCpuCapabilityCount; ++c)
    CHECK(rt::cpu::isa_kernels(CpuCapability(c)).level == CpuCapability(c));
  const CpuCapability highest = rt::cpu::highest_supported_capability();
  if (highest != CpuCapability::Avx512) {
    REQUIRE_THROWS_AS(rt::cpu::set_cpu_capability(CpuCapability::Avx512), rt::ValueError);
  } else {
    LevelGuard guard;
    rt::cpu::set_cpu_capability(CpuCapability::Default);
    CHECK(rt::cpu_capability() == "DEFAULT");
  }
}

TEST_CASE("isa kernels: float32 math functions within their ulps of float64 at every level", "[isa]") {
  const std::vector<float> x = sweep();
  const int64_t n = int64_t(x.size());
  for (CpuCapability level : supported_levels()) {
    const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
    for (const UnaryCase& c : kUnaryCases) {
      std::vector<float> y(x.size());
      k.unary_f32(c.op, y.data(), x.data(), n);
      double worst = 0.0;
      float worst_x = 0.f;
      for (size_t i = 0; i < x.size(); ++i) {
        const double ref = c.ref(double(x[i]));
        const double diff = std::fabs(double(y[i]) - ref);
        // Results in float's subnormal range have lost relative precision anyway: 64 subnormal steps.
        const bool subnormal = std::fabs(ref) < double(std::numeric_limits<float>::min());
        const double err = (c.max_abs > 0 && diff <= c.max_abs) ||
                                   (subnormal && diff <= 64 * double(std::numeric_limits<float>::denorm_min()))
                               ? 0.0
                               : ulps(y[i], ref);
        if (err > worst) worst = err, worst_x = x[i];
      }
      INFO(c.name << " at " << rt::cpu::capability_name(level) << ": " << worst << " ulps at x = " << worst_x);
      CHECK(worst <= c.max_ulps);
    }
  }
}

TEST_CASE("isa kernels: backward functions agree with float64 derivatives at every level", "[isa]") {
  std::vector<float> x, g;
  for (double v = -9.0; v <= 9.0; v += 0.0173) x.push_back(float(v)), g.push_back(float(0.5 + 0.1 * v));
  const int64_t n = int64_t(x.size());
  struct Case { rt::cpu::VecUnaryBackward op; bool saves_output; double (*f)(double); double (*df)(double); };
  const Case cases[] = {
      {rt::cpu::VecUnaryBackward::Sigmoid, true, sigmoid64, [](double v) { return sigmoid64(v) * (1 - sigmoid64(v)); }},
      {rt::cpu::VecUnaryBackward::Tanh, true, [](double v) { return std::tanh(v); },
       [](double v) { return 1 - std::tanh(v) * std::tanh(v); }},
      {rt::cpu::VecUnaryBackward::Silu, false, nullptr,
       [](double v) { return sigmoid64(v) * (1 + v * (1 - sigmoid64(v))); }},
      {rt::cpu::VecUnaryBackward::Gelu, false, nullptr,
       [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI); }},
      {rt::cpu::VecUnaryBackward::GeluTanh, false, nullptr, [](double v) {
         const double h = 1e-6;
         return (gelu_tanh64(v + h) - gelu_tanh64(v - h)) / (2 * h);
       }},
  };
  for (CpuCapability level : supported_levels()) {
    const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
    for (const Case& c : cases) {
      std::vector<float> saved(x.size()), out(x.size());
      for (size_t i = 0; i < x.size(); ++i) saved[i] = c.saves_output ? float(c.f(double(x[i]))) : x[i];
      k.unary_backward_f32(c.op, out.data(), g.data(), saved.data(), n);
      for (size_t i = 0; i < x.size(); ++i) {
        INFO("op " << int(c.op) << " at " << rt::cpu::capability_name(level) << ", x = " << x[i]);
        REQUIRE(std::fabs(double(out[i]) - double(g[i]) * c.df(double(x[i]))) <= 1e-6 * (1 + std::fabs(double(g[i]))));
      }
    }
  }
}

TEST_CASE("isa kernels: arithmetic gives the same bits at every level, with array and scalar operands", "[isa]") {
  const int64_t n = 1003;
  auto a = rt::testing::values(rt::testing::random({n}, rt::kFloat32, -3, 3, 1));
  auto b = rt::testing::values(rt::testing::random({n}, rt::kFloat32, 0.5, 3, 2));
  std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
  for (int op = 0; op < 4; ++op) {
    for (int64_t bs : {1, 0}) {
      std::vector<float> expect(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const float x = af[size_t(i)], y = bf[size_t(i * bs)], al = 0.3f;
        expect[size_t(i)] = op == 0 ? x + al * y : op == 1 ? x - al * y : op == 2 ? x * y : x / y;
      }
      for (CpuCapability level : supported_levels()) {
        std::vector<float> out(static_cast<size_t>(n));
        rt::cpu::isa_kernels(level).binary_f32(rt::cpu::VecBinary(op), out.data(), af.data(), 1, bf.data(), bs, n, 0.3f);
        INFO("op " << op << " b_step " << bs << " at " << rt::cpu::capability_name(level));
        CHECK(std::memcmp(out.data(), expect.data(), sizeof(float) * size_t(n)) == 0);
      }
    }
  }
}

TEST_CASE("isa kernels: ops on contiguous float32 run the chosen level and match the generic loops", "[isa]") {
  LevelGuard guard;
  rt::Tensor x = rt::testing::random({70000}, rt::kFloat32, -6, 6, 3);
  rt::Tensor strided = rt::testing::random({70000, 2}, rt::kFloat32, -6, 6, 3).select(1, 0).copy_(x);  // generic loop
  rt::Tensor y = rt::testing::random({70000}, rt::kFloat32, 0.5, 2, 4);
  for (CpuCapability level : supported_levels()) {
    rt::cpu::set_cpu_capability(level);
    INFO(rt::cpu::capability_name(level));
    rt::testing::require_close(rt::gelu(x), rt::gelu(strided), 1e-5, 1e-6);
    rt::testing::require_close(rt::sigmoid(x), rt::sigmoid(strided), 1e-5, 1e-7);
    rt::testing::require_close(rt::tanh(x), rt::tanh(strided), 1e-5, 1e-7);
    rt::testing::require_close(rt::exp(x), rt::exp(strided), 1e-5, 0);
    rt::testing::require_close(rt::silu(x), rt::silu(strided), 1e-5, 1e-6);
    CHECK(same_bits(rt::relu(x), rt::relu(strided)));
    CHECK(same_bits(rt::add(x, y, 0.5), rt::add(strided, y, 0.5)));
    CHECK(same_bits(rt::div(x, y), rt::div(strided, y)));
    CHECK(same_bits(x * 3.0, strided * 3.0));
    rt::Tensor xg = x.detach().requires_grad_(true);
    rt::gelu(xg).sum().backward();
    rt::Tensor x64 = x.to(rt::kFloat64).requires_grad_(true);
    rt::gelu(x64).sum().backward();
    rt::testing::require_close(xg.grad(), x64.grad().to(rt::kFloat32), 1e-5, 1e-6);
  }
}

// ---- fused optimizers against the chain of ops (engine/src/optim/functional.cpp) -------------
namespace {

// The chain adam_step_ runs for parameters without a fused kernel, written out op by op.
void chain_adam(rt::Tensor p, rt::Tensor m, rt::Tensor v, rt::Tensor vmax, rt::Tensor grad,
                const rt::optim::AdamStepOptions& h, double step) {
  rt::NoGradGuard ng;
  if (h.weight_decay != 0.0) {
    if (h.decoupled_weight_decay) p.mul_(1.0 - h.lr * h.weight_decay);
    else grad = grad.add(p, h.weight_decay);
  }
  rt::lerp_(m, grad, 1.0 - h.beta1);
  rt::addcmul_(v.mul_(h.beta2), grad, grad, 1.0 - h.beta2);
  const double step_size = h.lr / (1.0 - std::pow(h.beta1, step));
  const double bc2 = std::sqrt(1.0 - std::pow(h.beta2, step));
  rt::Tensor denom;
  if (vmax.defined()) {
    vmax.copy_(rt::maximum(vmax, v));
    denom = rt::sqrt(vmax);
  } else {
    denom = rt::sqrt(v);
  }
  denom.div_(bc2).add_(h.eps);
  rt::addcdiv_(p, m, denom, -step_size);
}

void chain_sgd(rt::Tensor p, rt::Tensor buf, rt::Tensor grad, const rt::optim::SGDOptions& o, bool first) {
  rt::NoGradGuard ng;
  if (o.weight_decay != 0.0) grad = grad.add(p, o.weight_decay);
  if (o.momentum != 0.0) {
    if (first) buf.copy_(grad);
    else buf.mul_(o.momentum).add_(grad, 1.0 - o.dampening);
    grad = o.nesterov ? grad.add(buf, o.momentum) : buf;
  }
  p.add_(grad, -o.lr);
}

}  // namespace

TEST_CASE("fused adam: every option matches the chain of ops bit for bit at every level, float32 and float64",
          "[isa][optim]") {
  LevelGuard guard;
  struct Opt { double wd; bool decoupled, amsgrad, maximize; double beta1; };
  const Opt opts[] = {{0, false, false, false, 0.9}, {0.1, false, false, false, 0.9}, {0.1, true, false, false, 0.9},
                      {0, false, true, false, 0.9},  {0.05, true, true, true, 0.3},   {0.2, false, true, true, 0.6}};
  for (CpuCapability level : supported_levels()) {
    rt::cpu::set_cpu_capability(level);
    for (rt::ScalarType dt : {rt::kFloat32, rt::kFloat64}) {
      for (const Opt& o : opts) {
        INFO(rt::cpu::capability_name(level) << " " << rt::dtype_name(dt) << " wd " << o.wd << " decoupled "
                                             << o.decoupled << " amsgrad " << o.amsgrad << " maximize " << o.maximize);
        const rt::optim::AdamStepOptions h{.lr = 1e-2, .beta1 = o.beta1, .beta2 = 0.99, .eps = 1e-6,
                                           .weight_decay = o.wd, .decoupled_weight_decay = o.decoupled};
        const std::vector<rt::Shape> shapes = {{300, 257}, {7}, {40000}};
        std::vector<rt::Tensor> ps, gs, ms, vs, vms, steps, cps, cms, cvs, cvms;
        for (size_t i = 0; i < shapes.size(); ++i) {
          ps.push_back(rt::testing::random(shapes[i], dt, -1, 1, 10 + i));
          ms.push_back(rt::zeros_like(ps.back()));
          vs.push_back(rt::zeros_like(ps.back()));
          vms.push_back(rt::zeros_like(ps.back()));
          steps.push_back(rt::scalar_tensor(0.0, rt::kFloat32));
          cps.push_back(ps.back().clone()), cms.push_back(ms.back().clone());
          cvs.push_back(vs.back().clone()), cvms.push_back(vms.back().clone());
        }
        for (int step = 1; step <= 3; ++step) {
          gs.clear();
          for (size_t i = 0; i < shapes.size(); ++i) gs.push_back(rt::testing::random(shapes[i], dt, -1, 1, 100 * step + i));
          rt::optim::fused_adam_({.params = ps, .grads = gs, .exp_avgs = ms, .exp_avg_sqs = vs,
                                  .max_exp_avg_sqs = o.amsgrad ? vms : rt::TensorList{}, .steps = steps}, h, o.maximize);
          for (size_t i = 0; i < shapes.size(); ++i)
            chain_adam(cps[i], cms[i], cvs[i], o.amsgrad ? cvms[i] : rt::Tensor(), o.maximize ? gs[i].neg() : gs[i], h,
                       double(step));
        }
        for (size_t i = 0; i < shapes.size(); ++i) {
          CHECK(steps[i].item<double>() == 3.0);
          CHECK(same_bits(ps[i], cps[i]));
          CHECK(same_bits(ms[i], cms[i]));
          CHECK(same_bits(vs[i], cvs[i]));
          if (o.amsgrad) CHECK(same_bits(vms[i], cvms[i]));
        }
        // The single-parameter entry point (adam_step_) takes the same kernel.
        rt::Tensor p1 = cps[0].clone(), m1 = cms[0].clone(), v1 = cvs[0].clone();
        rt::Tensor p2 = p1.clone(), m2 = m1.clone(), v2 = v1.clone();
        rt::optim::adam_step_(p1, m1, v1, {}, gs[0], h, 4.0);
        chain_adam(p2, m2, v2, {}, gs[0], h, 4.0);
        CHECK(same_bits(p1, p2));
      }
    }
  }
}

TEST_CASE("fused sgd: every option matches the chain of ops bit for bit at every level", "[isa][optim]") {
  LevelGuard guard;
  const rt::optim::SGDOptions opts[] = {{.lr = 0.1},
                                        {.lr = 0.1, .weight_decay = 0.01},
                                        {.lr = 0.05, .momentum = 0.9},
                                        {.lr = 0.05, .momentum = 0.9, .dampening = 0.3, .weight_decay = 0.02},
                                        {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.01, .nesterov = true}};
  for (CpuCapability level : supported_levels()) {
    rt::cpu::set_cpu_capability(level);
    for (rt::ScalarType dt : {rt::kFloat32, rt::kFloat64}) {
      for (const auto& o : opts) {
        for (bool maximize : {false, true}) {
          INFO(rt::cpu::capability_name(level) << " momentum " << o.momentum << " nesterov " << o.nesterov
                                               << " maximize " << maximize);
          rt::Tensor p = rt::testing::random({70001}, dt, -1, 1, 5), cp = p.clone();
          rt::Tensor buf = rt::empty_like(p), cbuf = rt::empty_like(p);
          for (int step = 0; step < 3; ++step) {
            rt::Tensor g = rt::testing::random({70001}, dt, -1, 1, 50 + step);
            rt::optim::SgdGroupTensors t{.params = {p}, .grads = {g}};
            if (o.momentum != 0.0) t.momentum_buffers = {buf}, t.first = {step == 0};
            rt::optim::fused_sgd_(t, o, maximize);
            chain_sgd(cp, cbuf, maximize ? g.neg() : g, o, step == 0);
          }
          CHECK(same_bits(p, cp));
          if (o.momentum != 0.0) CHECK(same_bits(buf, cbuf));
        }
      }
    }
  }
}

TEST_CASE("fused adam: a group mixing a non-contiguous parameter takes the chain for it", "[isa][optim]") {
  rt::Tensor base = rt::testing::random({20, 30}, rt::kFloat32, -1, 1, 7);
  rt::Tensor p = base.t(), g = rt::testing::random({30, 20}, rt::kFloat32, -1, 1, 8);
  rt::Tensor m = rt::zeros({30, 20}), v = rt::zeros({30, 20}), step = rt::scalar_tensor(0.0, rt::kFloat32);
  rt::Tensor cp = p.clone(), cm = m.clone(), cv = v.clone();
  rt::optim::fused_adam_({.params = {p}, .grads = {g}, .exp_avgs = {m}, .exp_avg_sqs = {v}, .steps = {step}}, {});
  chain_adam(cp, cm, cv, {}, g, {}, 1.0);
  CHECK(same_bits(p, cp));
  REQUIRE_THROWS_AS(rt::optim::fused_adam_({.params = {p}, .grads = {}, .exp_avgs = {m}, .exp_avg_sqs = {v},
                                            .steps = {step}}, {}),
                    rt::ValueError);
}

TEST_CASE("cpu capability: RT_CPU_CAPABILITY picks the level the ops run at", "[capability_env]") {
  const char* env = std::getenv("RT_CPU_CAPABILITY");
  std::string ignored;
  const CpuCapability expected =
      rt::cpu::choose_capability(env, rt::cpu::highest_supported_capability(), ignored);
  REQUIRE(rt::cpu::cpu_capability() == expected);
  // gelu of a contiguous float32 tensor is the chosen level's kernel, bit for bit.
  rt::Tensor x = rt::testing::random({4099}, rt::kFloat32, -5, 5, 9);
  std::vector<float> direct(4099);
  rt::cpu::isa_kernels(expected).unary_f32(rt::cpu::VecUnary::Gelu, direct.data(),
                                           static_cast<const float*>(x.raw_data()), 4099);
  CHECK(std::memcmp(rt::gelu(x).raw_data(), direct.data(), sizeof(float) * 4099) == 0);
}
