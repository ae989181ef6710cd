#include "testing.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <sstream>

namespace rt::testing {

Tensor random(const Shape& shape, ScalarType dtype, double lo, double hi, uint64_t seed) {
  std::mt19937_64 gen(seed * 7919 + 17);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(size_t(numel_of(shape)));
  for (auto& x : v) x = dist(gen);
  return from_vector(v, shape).to(dtype).contiguous();
}

Tensor random_int(const Shape& shape, int64_t lo, int64_t hi, uint64_t seed, ScalarType dtype) {
  std::mt19937_64 gen(seed * 104729 + 3);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  std::vector<int64_t> v(size_t(numel_of(shape)));
  for (auto& x : v) x = dist(gen);
  return from_vector(v, shape).to(dtype).contiguous();
}

std::vector<double> values(const Tensor& t) {
  NoGradGuard g;
  return t.detach().to_vector<double>();
}

void require_close(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  INFO("actual shape " << format_shape(actual.sizes()) << ", expected shape " << format_shape(expected.sizes()));
  REQUIRE(actual.sizes() == expected.sizes());
  const auto a = values(actual), e = values(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    const bool both_nan = std::isnan(a[i]) && std::isnan(e[i]);
    const bool same_inf = std::isinf(a[i]) && a[i] == e[i];
    if (both_nan || same_inf) continue;
    if (!(std::abs(a[i] - e[i]) <= atol + rtol * std::abs(e[i]))) {
      std::ostringstream os;
      os.precision(17);
      os << "element " << i << ": actual " << a[i] << " vs expected " << e[i] << " (rtol " << rtol << ", atol " << atol << ")";
      FAIL(os.str());
    }
  }
}

Tensor map_reference(const Tensor& x, const std::function<double(double)>& f) {
  auto v = values(x);
  for (auto& e : v) e = f(e);
  return from_vector(v, x.sizes());
}

void run_grad_cases(const std::vector<GradCase>& cases) {
  uint64_t seed = 100;
  for (const auto& c : cases) {
    INFO("grad case '" << c.name << "'");
    TensorList inputs;
    for (const auto& s : c.shapes) inputs.push_back(random(s, kFloat64, c.lo, c.hi, seed++).requires_grad_());
    Tensor out = c.fn(inputs);
    REQUIRE(out.defined());
    REQUIRE(out.requires_grad());
    Tensor w = random(out.sizes(), kFloat64, 0.5, 1.5, seed++);
    auto objective = [&](const TensorList& in) {
      NoGradGuard g;
      return (c.fn(in).to(kFloat64) * w).sum().item<double>();
    };
    TensorList analytic = autograd::grad({(out.to(kFloat64) * w).sum()}, inputs, {}, false, false, true);
    const double eps = 1e-6;
    for (size_t k = 0; k < inputs.size(); ++k) {
      Tensor base = inputs[k].detach().clone();
      std::vector<double> numeric(size_t(base.numel()));
      double* p = base.data_ptr<double>();
      for (int64_t i = 0; i < base.numel(); ++i) {
        const double orig = p[i];
        TensorList in = inputs;
        p[i] = orig + eps;
        in[k] = base.clone();
        const double fp = objective(in);
        p[i] = orig - eps;
        in[k] = base.clone();
        const double fm = objective(in);
        p[i] = orig;
        numeric[size_t(i)] = (fp - fm) / (2 * eps);
      }
      INFO("input " << k << " of shape " << format_shape(base.sizes()));
      Tensor a = analytic[k].defined() ? analytic[k] : zeros(base.sizes(), kFloat64);
      require_close(a, from_vector(numeric, base.sizes()), c.rtol, c.atol);
    }
  }
}

}  // namespace rt::testing
