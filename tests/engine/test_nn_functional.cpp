// nn functional ops: softmax family, losses, norms, embedding, dropout, attention.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::TensorList;
using rt::testing::random;
using rt::testing::random_int;
using rt::testing::require_close;
using rt::testing::values;

namespace {

// ---- float64 references ----------------------------------------------------------------

struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};
Layout layout(const Shape& s, int64_t dim) {
  Layout L;
  for (int64_t i = 0; i < int64_t(s.size()); ++i) (i < dim ? L.outer : i == dim ? L.n : L.inner) *= s[size_t(i)];
  return L;
}

Tensor softmax_ref(const Tensor& x, int64_t dim, bool log) {
  auto v = values(x);
  const Layout L = layout(x.sizes(), dim);
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < L.outer; ++o)
    for (int64_t i = 0; i < L.inner; ++i) {
      auto at = [&](int64_t d) { return size_t((o * L.n + d) * L.inner + i); };
      double m = -INFINITY, s = 0;
      for (int64_t d = 0; d < L.n; ++d) m = std::max(m, v[at(d)]);
      for (int64_t d = 0; d < L.n; ++d) s += std::exp(v[at(d)] - m);
      for (int64_t d = 0; d < L.n; ++d) out[at(d)] = log ? v[at(d)] - m - std::log(s) : std::exp(v[at(d)] - m) / s;
    }
  return rt::from_vector(out, x.sizes());
}

// PyTorch's cross_entropy (logits) / nll_loss, with weight, ignore_index and label smoothing.
Tensor class_loss_ref(const Tensor& x, const Tensor& target, const Tensor& weight, int64_t ignore,
                      const std::string& red, double eps, bool logits) {
  auto v = values(x);
  auto t = target.to_vector<int64_t>();
  const int64_t C = x.dim() == 1 ? x.size(0) : x.size(1), N = x.dim() == 1 ? 1 : x.size(0);
  const int64_t inner = N == 0 || C == 0 ? 1 : x.numel() / (N * C);
  std::vector<double> w = weight.defined() ? values(weight) : std::vector<double>(size_t(C), 1.0);
  std::vector<double> per(t.size(), 0.0);
  double total = 0, denom = 0;
  for (int64_t s = 0; s < int64_t(t.size()); ++s) {
    if (t[size_t(s)] == ignore) continue;
    auto at = [&](int64_t c) { return v[size_t(((s / inner) * C + c) * inner + s % inner)]; };
    std::vector<double> logp(static_cast<size_t>(C));
    double m = -INFINITY, sum = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, at(c));
    for (int64_t c = 0; c < C; ++c) sum += std::exp(at(c) - m);
    for (int64_t c = 0; c < C; ++c) logp[size_t(c)] = logits ? at(c) - m - std::log(sum) : at(c);
    const int64_t tc = t[size_t(s)];
    double smooth = 0;
    for (int64_t c = 0; c < C; ++c) smooth -= w[size_t(c)] * logp[size_t(c)];
    per[size_t(s)] = (1 - eps) * -w[size_t(tc)] * logp[size_t(tc)] + eps / double(C) * smooth;
    total += per[size_t(s)];
    denom += w[size_t(tc)];
  }
  if (red == "none") return rt::from_vector(per, target.sizes());
  return rt::scalar_tensor(red == "sum" ? total : total / denom, rt::kFloat64);
}

Tensor reduce_ref(const std::vector<double>& per, const Shape& shape, const std::string& red) {
  double s = 0;
  for (double p : per) s += p;
  if (red == "none") return rt::from_vector(per, shape);
  return rt::scalar_tensor(red == "sum" ? s : s / double(per.size()), rt::kFloat64);
}

Tensor layer_norm_ref(const Tensor& x, int64_t D, const Tensor& w, const Tensor& b, double eps) {
  auto v = values(x);
  std::vector<double> wv = w.defined() ? values(w) : std::vector<double>(size_t(D), 1.0);
  std::vector<double> bv = b.defined() ? values(b) : std::vector<double>(size_t(D), 0.0);
  std::vector<double> out(v.size());
  for (size_t r = 0; r < v.size() / size_t(D); ++r) {
    double m = 0, q = 0;
    for (int64_t j = 0; j < D; ++j) m += v[r * size_t(D) + size_t(j)] / double(D);
    for (int64_t j = 0; j < D; ++j) q += std::pow(v[r * size_t(D) + size_t(j)] - m, 2) / double(D);
    for (int64_t j = 0; j < D; ++j)
      out[r * size_t(D) + size_t(j)] = (v[r * size_t(D) + size_t(j)] - m) / std::sqrt(q + eps) * wv[size_t(j)] + bv[size_t(j)];
  }
  return rt::from_vector(out, x.sizes());
}

struct BnRef {
  Tensor out;
  std::vector<double> mean, var_unbiased;
};
BnRef batch_norm_ref(const Tensor& x, const std::vector<double>& rm, const std::vector<double>& rv, const Tensor& w,
                     const Tensor& b, bool training, double eps) {
  auto v = values(x);
  const int64_t N = x.size(0), C = x.size(1), inner = x.numel() / (N * C);
  std::vector<double> wv = w.defined() ? values(w) : std::vector<double>(size_t(C), 1.0);
  std::vector<double> bv = b.defined() ? values(b) : std::vector<double>(size_t(C), 0.0);
  BnRef r;
  std::vector<double> out(v.size());
  for (int64_t c = 0; c < C; ++c) {
    auto idx = [&](int64_t n, int64_t i) { return size_t((n * C + c) * inner + i); };
    double m = 0, q = 0;
    const double M = double(N * inner);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) m += v[idx(n, i)] / M;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) q += std::pow(v[idx(n, i)] - m, 2);
    r.mean.push_back(m);
    r.var_unbiased.push_back(q / (M - 1));
    const double mu = training ? m : rm[size_t(c)], var = training ? q / M : rv[size_t(c)];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i)
        out[idx(n, i)] = (v[idx(n, i)] - mu) / std::sqrt(var + eps) * wv[size_t(c)] + bv[size_t(c)];
  }
  r.out = rt::from_vector(out, x.sizes());
  return r;
}

// softmax(q k^T * scale + mask) v for 3-D inputs; mask as additive float64 [L, S] (or empty).
Tensor sdpa_ref(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<double>& mask, double scale) {
  auto qv = values(q), kv = values(k), vv = values(v);
  const int64_t B = q.size(0), L = q.size(1), E = q.size(2), S = k.size(1), Ev = v.size(2);
  std::vector<double> out(size_t(B * L * Ev), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double m = -INFINITY, z = 0;
      for (int64_t j = 0; j < S; ++j) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e) d += qv[size_t((b * L + i) * E + e)] * kv[size_t((b * S + j) * E + e)];
        s[size_t(j)] = d * scale + (mask.empty() ? 0.0 : mask[size_t(i * S + j)]);
        m = std::max(m, s[size_t(j)]);
      }
      for (auto& x : s) z += (x = std::exp(x - m));
      for (int64_t j = 0; j < S; ++j)
        for (int64_t e = 0; e < Ev; ++e) out[size_t((b * L + i) * Ev + e)] += s[size_t(j)] / z * vv[size_t((b * S + j) * Ev + e)];
    }
  return rt::from_vector(out, {B, L, Ev});
}

template <typename E, typename F>
void require_throws(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    for (const auto& p : parts) CHECK(msg.find(p) != std::string::npos);
    return;
  } catch (const std::exception& e) {
    FAIL("threw the wrong exception type: " << e.what());
  }
  FAIL("expected an exception");
}

// Runs f with 1 and then 4 OpenMP threads and requires bit-identical results.
void require_thread_independent(const std::function<Tensor()>& f) {
  const int prev = omp_get_max_threads();
  omp_set_num_threads(1);
  auto a = values(f());
  omp_set_num_threads(4);
  auto b = values(f());
  omp_set_num_threads(prev);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) FAIL("element " << i << ": " << a[i] << " vs " << b[i]);
}

}  // namespace

// ---- softmax ------------------------------------------------------------------------------

TEST_CASE("softmax and log_softmax match float64 references along every dim") {
  for (const Shape& shape : {Shape{4, 7}, Shape{3, 5, 4}, Shape{2, 3, 4, 5}}) {
    for (int64_t dim = -1; dim < int64_t(shape.size()); ++dim) {
      INFO("shape " << rt::format_shape(shape) << " dim " << dim);
      auto x = random(shape, rt::kFloat64, -3, 3, 1);
      const int64_t d = dim < 0 ? dim + int64_t(shape.size()) : dim;
      require_close(rt::softmax(x, dim), softmax_ref(x, d, false), 1e-12, 1e-14);
      require_close(rt::log_softmax(x, dim), softmax_ref(x, d, true), 1e-12, 1e-12);
      auto xf = x.to(rt::kFloat32);
      require_close(rt::softmax(xf, dim), softmax_ref(x, d, false), 1e-5, 1e-7);
      require_close(xf.log_softmax(dim), softmax_ref(x, d, true), 1e-5, 1e-6);
    }
  }
}

TEST_CASE("softmax: large inputs use the parallel path and give the same bits on any thread count") {
  auto x = random({96, 700}, rt::kFloat32, -5, 5, 2);
  require_close(rt::softmax(x, 1), softmax_ref(x, 1, false), 1e-5, 1e-7);
  require_close(rt::log_softmax(x, 0), softmax_ref(x, 0, true), 1e-5, 1e-5);
  require_thread_independent([&] { return rt::softmax(x, 1); });
  require_thread_independent([&] { return rt::log_softmax(x, 0); });
}

TEST_CASE("softmax: numerically stable, NaN-propagating, half types, edge shapes") {
  auto x = rt::tensor({1000.0, 1001.0, 1002.0});
  require_close(rt::softmax(x, 0), softmax_ref(rt::tensor({0.0, 1.0, 2.0}), 0, false), 1e-12);
  require_close(rt::log_softmax(x * -1.0, 0), softmax_ref(rt::tensor({-1000.0, -1001.0, -1002.0}), 0, true), 1e-12);
  auto nan_row = rt::softmax(rt::tensor({1.0, std::nan(""), 2.0}), 0);
  for (double v : values(nan_row)) CHECK(std::isnan(v));
  auto xh = random({5, 9}, rt::kFloat16, -2, 2, 3);
  auto yh = rt::softmax(xh, -1);
  CHECK(yh.dtype() == rt::kFloat16);
  require_close(yh, softmax_ref(xh, 1, false), 2e-3, 1e-3);
  require_close(rt::log_softmax(xh.to(rt::kBFloat16), -1), softmax_ref(xh.to(rt::kBFloat16), 1, true), 2e-2, 2e-2);
  CHECK(rt::softmax(rt::scalar_tensor(3.0, rt::kFloat64), 0).item<double>() == 1.0);
  CHECK(rt::softmax(rt::zeros({0, 4}), 1).sizes() == Shape{0, 4});
  auto xt = random({4, 6}, rt::kFloat64, -1, 1, 4).t();  // non-contiguous input
  require_close(rt::softmax(xt, 1), softmax_ref(xt.contiguous(), 1, false), 1e-12);
  require_throws<rt::DTypeError>([] { rt::softmax(rt::tensor({int64_t(1), int64_t(2)}), 0); }, {"softmax", "int64"});
  require_throws<rt::IndexError>([] { rt::log_softmax(rt::zeros({2, 3}), 2); }, {"log_softmax", "2"});
}

TEST_CASE("softmax family records PyTorch's backward node names") {
  auto x = random({2, 3}, rt::kFloat64, -1, 1, 5).requires_grad_();
  CHECK(rt::softmax(x, 1).grad_fn()->name() == "SoftmaxBackward0");
  CHECK(rt::log_softmax(x, 1).grad_fn()->name() == "LogSoftmaxBackward0");
  CHECK(rt::cross_entropy(x, rt::tensor({int64_t(0), int64_t(2)})).grad_fn()->name() == "CrossEntropyLossBackward0");
  CHECK(rt::nll_loss(x, rt::tensor({int64_t(0), int64_t(2)})).grad_fn()->name() == "NllLossBackward0");
  CHECK(rt::mse_loss(x, rt::zeros({2, 3}, rt::kFloat64)).grad_fn()->name() == "MseLossBackward0");
  CHECK(rt::layer_norm(x, {3}).grad_fn()->name() == "NativeLayerNormBackward0");
  CHECK(rt::batch_norm(x, {}, {}, {}, {}, true).grad_fn()->name() == "NativeBatchNormBackward0");
  auto y = rt::softmax(x, 1);
  y.mul_(rt::scalar_tensor(2.0, rt::kFloat64));  // modifies the output SoftmaxBackward0 saved
  CHECK_THROWS_AS(rt::autograd::grad({y.sum()}, {x}), rt::AutogradError);
}

// ---- losses --------------------------------------------------------------------------------

TEST_CASE("cross_entropy matches PyTorch's definition for weights, ignore_index, smoothing and reductions") {
  CHECK(rt::cross_entropy(rt::tensor({1.0, 2.0, 3.0}, {1, 3}), rt::tensor({int64_t(2)})).item<double>() ==
        Approx(0.40760596444438).epsilon(1e-12));
  struct Case {
    Shape shape;
    bool weighted;
    int64_t ignore;
    double eps;
  };
  const std::vector<Case> cases = {
      {{6, 5}, false, -100, 0.0}, {{6, 5}, true, -100, 0.0}, {{6, 5}, true, 2, 0.0},   {{6, 5}, false, 1, 0.2},
      {{6, 5}, true, 3, 0.3},     {{3, 4, 2, 3}, true, 0, 0.1}, {{5}, false, -100, 0.25}, {{40, 30, 40}, true, 4, 0.1},
  };
  uint64_t seed = 10;
  for (const auto& c : cases) {
    const int64_t C = c.shape.size() == 1 ? c.shape[0] : c.shape[1];
    Shape tshape;
    if (c.shape.size() > 1) tshape.push_back(c.shape[0]);
    for (size_t d = 2; d < c.shape.size(); ++d) tshape.push_back(c.shape[d]);
    auto x = random(c.shape, rt::kFloat64, -3, 3, seed++);
    auto t = random_int(tshape, 0, C, seed++);
    if (c.ignore >= 0 && t.numel() > 1) t.data_ptr<int64_t>()[0] = c.ignore;
    Tensor w = c.weighted ? random({C}, rt::kFloat64, 0.2, 2.0, seed++) : Tensor();
    for (const std::string red : {"mean", "sum", "none"}) {
      INFO("shape " << rt::format_shape(c.shape) << " weighted " << c.weighted << " ignore " << c.ignore << " eps "
                    << c.eps << " reduction " << red);
      require_close(rt::cross_entropy(x, t, w, c.ignore, red, c.eps), class_loss_ref(x, t, w, c.ignore, red, c.eps, true),
                    1e-10, 1e-12);
      require_close(rt::cross_entropy(x.to(rt::kFloat32), t, w.defined() ? w.to(rt::kFloat32) : w, c.ignore, red, c.eps),
                    class_loss_ref(x, t, w, c.ignore, red, c.eps, true), 1e-4, 1e-5);
      if (c.eps == 0.0)
        require_close(rt::nll_loss(rt::log_softmax(x, x.dim() == 1 ? 0 : 1), t, w, c.ignore, red),
                      class_loss_ref(x, t, w, c.ignore, red, 0.0, true), 1e-10, 1e-12);
      require_close(rt::nll_loss(x, t, w, c.ignore, red), class_loss_ref(x, t, w, c.ignore, red, 0.0, false), 1e-12, 1e-12);
    }
  }
  auto big = random({300, 200}, rt::kFloat32, -4, 4, 40);
  auto bt = random_int({300}, 0, 200, 41);
  require_thread_independent([&] { return rt::cross_entropy(big, bt, {}, -100, "mean", 0.1); });
  require_thread_independent([&] {
    auto xb = big.detach().clone().requires_grad_();
    return rt::autograd::grad({rt::cross_entropy(xb, bt, {}, 7, "mean", 0.1)}, {xb})[0];
  });
}

TEST_CASE("cross_entropy and nll_loss: all-ignored mean is NaN, errors name values and shapes") {
  auto x = random({3, 4}, rt::kFloat64, -1, 1, 50);
  CHECK(std::isnan(rt::cross_entropy(x, rt::full({3}, -100, rt::kInt64)).item<double>()));
  CHECK(rt::cross_entropy(x, rt::full({3}, -100, rt::kInt64), {}, -100, "sum").item<double>() == 0.0);
  require_throws<rt::IndexError>([&] { rt::cross_entropy(x, rt::tensor({int64_t(0), int64_t(5), int64_t(1)})); },
                                 {"cross_entropy", "target 5", "4 classes"});
  require_throws<rt::IndexError>([&] { rt::nll_loss(x, rt::tensor({int64_t(-1), int64_t(0), int64_t(1)})); },
                                 {"nll_loss", "target -1", "4 classes"});
  require_throws<rt::ShapeError>([&] { rt::cross_entropy(x, rt::zeros({4}, rt::kInt64)); },
                                 {"cross_entropy", "[3, 4]", "[4]", "batch size 3"});
  require_throws<rt::ShapeError>([&] { rt::cross_entropy(rt::zeros({2, 3, 5}), rt::zeros({2, 4}, rt::kInt64)); },
                                 {"[2, 3, 5]", "[2, 4]", "[2, 5]"});
  require_throws<rt::ShapeError>([&] { rt::cross_entropy(x, rt::zeros({3}, rt::kInt64), rt::ones({3}, rt::kFloat64)); },
                                 {"weight", "[3]", "4 classes"});
  require_throws<rt::DTypeError>([&] { rt::cross_entropy(x, rt::zeros({3}, rt::kFloat32)); }, {"cross_entropy", "float32"});
  require_throws<rt::ValueError>([&] { rt::cross_entropy(x, rt::zeros({3}, rt::kInt64), {}, -100, "avg"); },
                                 {"cross_entropy", "'avg'"});
  require_throws<rt::ValueError>([&] { rt::cross_entropy(x, rt::zeros({3}, rt::kInt64), {}, -100, "mean", 1.5); },
                                 {"label_smoothing"});
}

TEST_CASE("mse_loss matches the reference, broadcasts, and validates reduction") {
  auto x = random({4, 5}, rt::kFloat64, -2, 2, 60), t = random({4, 5}, rt::kFloat64, -2, 2, 61);
  auto xv = values(x), tv = values(t);
  std::vector<double> per(xv.size());
  for (size_t i = 0; i < per.size(); ++i) per[i] = std::pow(xv[i] - tv[i], 2);
  for (const std::string red : {"mean", "sum", "none"}) {
    require_close(rt::mse_loss(x, t, red), reduce_ref(per, {4, 5}, red), 1e-12);
    require_close(rt::mse_loss(x.to(rt::kFloat32), t.to(rt::kFloat32), red), reduce_ref(per, {4, 5}, red), 1e-5, 1e-6);
  }
  auto row = random({5}, rt::kFloat64, -1, 1, 62);
  require_close(rt::mse_loss(x, row, "none"), rt::mse_loss(x, row.expand({4, 5}).contiguous(), "none"), 0, 0);
  require_throws<rt::ShapeError>([&] { rt::mse_loss(x, rt::zeros({3}, rt::kFloat64)); }, {"mse_loss", "[4, 5]", "[3]"});
  require_throws<rt::ValueError>([&] { rt::mse_loss(x, t, "max"); }, {"mse_loss", "'max'"});
  auto big = random({200, 300}, rt::kFloat32, -1, 1, 63);
  require_thread_independent([&] { return rt::mse_loss(big, big * 0.5); });
}

TEST_CASE("binary_cross_entropy_with_logits: stable formula with weight and pos_weight") {
  auto x = random({4, 3}, rt::kFloat64, -4, 4, 70), t = random({4, 3}, rt::kFloat64, 0, 1, 71);
  auto w = random({4, 1}, rt::kFloat64, 0.5, 2, 72), pw = random({3}, rt::kFloat64, 0.5, 3, 73);
  auto xv = values(x), tv = values(t), wv = values(w), pv = values(pw);
  std::vector<double> per(xv.size()), plain(xv.size());
  for (size_t i = 0; i < per.size(); ++i) {
    const double s = 1 / (1 + std::exp(-xv[i]));
    const double p = pv[i % 3];
    per[i] = -wv[i / 3] * (p * tv[i] * std::log(s) + (1 - tv[i]) * std::log(1 - s));
    plain[i] = -(tv[i] * std::log(s) + (1 - tv[i]) * std::log(1 - s));
  }
  for (const std::string red : {"mean", "sum", "none"}) {
    require_close(rt::binary_cross_entropy_with_logits(x, t, w, red, pw), reduce_ref(per, {4, 3}, red), 1e-10, 1e-12);
    require_close(rt::binary_cross_entropy_with_logits(x.to(rt::kFloat32), t.to(rt::kFloat32), {}, red),
                  reduce_ref(plain, {4, 3}, red), 1e-5, 1e-6);
  }
  auto extreme = rt::binary_cross_entropy_with_logits(rt::tensor({200.0, -200.0}), rt::tensor({0.0, 1.0}), {}, "none");
  require_close(extreme, rt::tensor({200.0, 200.0}), 1e-12);
  require_throws<rt::ShapeError>([&] { rt::binary_cross_entropy_with_logits(x, rt::zeros({3, 4}, rt::kFloat64)); },
                                 {"binary_cross_entropy_with_logits", "[3, 4]", "[4, 3]"});
  require_throws<rt::ShapeError>([&] { rt::binary_cross_entropy_with_logits(x, t, {}, "mean", rt::ones({4}, rt::kFloat64)); },
                                 {"pos_weight", "[4]", "[4, 3]"});
}

// ---- norms ---------------------------------------------------------------------------------

TEST_CASE("layer_norm matches the reference with and without affine parameters") {
  auto x = random({3, 4, 6}, rt::kFloat64, -2, 2, 80);
  auto w = random({6}, rt::kFloat64, 0.5, 1.5, 81), b = random({6}, rt::kFloat64, -1, 1, 82);
  require_close(rt::layer_norm(x, {6}, w, b), layer_norm_ref(x, 6, w, b, 1e-5), 1e-10, 1e-12);
  require_close(rt::layer_norm(x, {6}), layer_norm_ref(x, 6, {}, {}, 1e-5), 1e-10, 1e-12);
  auto w2 = random({4, 6}, rt::kFloat64, 0.5, 1.5, 83);
  require_close(rt::layer_norm(x, {4, 6}, w2, {}, 1e-3), layer_norm_ref(x, 24, w2, {}, 1e-3), 1e-10, 1e-12);
  require_close(rt::layer_norm(x.to(rt::kFloat32), {6}, w.to(rt::kFloat32), b.to(rt::kFloat32)),
                layer_norm_ref(x, 6, w, b, 1e-5), 1e-4, 1e-5);
  require_close(rt::layer_norm(x.to(rt::kBFloat16), {6}), layer_norm_ref(x.to(rt::kBFloat16), 6, {}, {}, 1e-5), 2e-2, 3e-2);
  auto big = random({256, 384}, rt::kFloat32, -1, 1, 84).requires_grad_();
  auto bw = random({384}, rt::kFloat32, 0.5, 1.5, 85).requires_grad_();
  require_thread_independent([&] {
    auto y = rt::layer_norm(big, {384}, bw);
    auto g = rt::autograd::grad({(y * y).sum()}, {big, bw});
    return rt::cat({g[0].flatten(), g[1], y.detach().flatten()});
  });
  require_throws<rt::ShapeError>([&] { rt::layer_norm(x, {4}); }, {"layer_norm", "[4]", "[3, 4, 6]"});
  require_throws<rt::ShapeError>([&] { rt::layer_norm(x, {6}, rt::ones({5}, rt::kFloat64)); },
                                 {"layer_norm", "weight", "[5]", "[6]"});
}

TEST_CASE("batch_norm float32 forward and gradients match float64 over long vectorised rows, training and eval") {
  // Rows of 35 and 1024 elements: the vectorised loops' main part and remainders, and one-element rows ([N, C]).
  for (const Shape& shape : {Shape{4, 6, 5, 7}, Shape{3, 5, 32, 32}, Shape{64, 9}}) {
    for (bool training : {true, false}) {
      INFO("shape " << rt::format_shape(shape) << " training " << training);
      const int64_t C = shape[1];
      auto x64 = random(shape, rt::kFloat64, -2, 3, 97).requires_grad_();
      auto w64 = random({C}, rt::kFloat64, 0.5, 1.5, 98).requires_grad_();
      auto b64 = random({C}, rt::kFloat64, -1, 1, 99).requires_grad_();
      auto g64 = random(shape, rt::kFloat64, -1, 1, 100);
      auto rm64 = random({C}, rt::kFloat64, -0.5, 0.5, 101), rv64 = random({C}, rt::kFloat64, 0.5, 1.5, 102);
      auto x32 = x64.detach().to(rt::kFloat32).requires_grad_(), w32 = w64.detach().to(rt::kFloat32).requires_grad_();
      auto b32 = b64.detach().to(rt::kFloat32).requires_grad_();
      auto rm32 = rm64.to(rt::kFloat32), rv32 = rv64.to(rt::kFloat32);
      auto y64 = rt::batch_norm(x64, rm64, rv64, w64, b64, training, 0.1, 1e-5);
      auto y32 = rt::batch_norm(x32, rm32, rv32, w32, b32, training, 0.1, 1e-5);
      require_close(y32, y64, 1e-4, 1e-5);
      require_close(rm32, rm64, 1e-5, 1e-6);
      require_close(rv32, rv64, 1e-5, 1e-6);
      auto d64 = rt::autograd::grad({y64}, {x64, w64, b64}, {g64});
      auto d32 = rt::autograd::grad({y32}, {x32, w32, b32}, {g64.to(rt::kFloat32)});
      for (size_t i = 0; i < 3; ++i) require_close(d32[i], d64[i], 1e-3, 1e-4);
    }
  }
}

TEST_CASE("batch_norm: training uses batch stats and updates running buffers in place, eval uses them") {
  auto x = random({5, 3, 4}, rt::kFloat64, -2, 2, 90);
  auto w = random({3}, rt::kFloat64, 0.5, 1.5, 91), b = random({3}, rt::kFloat64, -1, 1, 92);
  auto rm = random({3}, rt::kFloat64, -0.5, 0.5, 93), rv = random({3}, rt::kFloat64, 0.5, 1.5, 94);
  const auto rm0 = values(rm), rv0 = values(rv);
  const uint32_t v0 = rm.version();
  auto ref = batch_norm_ref(x, rm0, rv0, w, b, true, 1e-5);
  require_close(rt::batch_norm(x, rm, rv, w, b, true, 0.1, 1e-5), ref.out, 1e-10, 1e-12);
  CHECK(rm.version() > v0);
  std::vector<double> em(3), ev(3);
  for (size_t c = 0; c < 3; ++c) {
    em[c] = 0.9 * rm0[c] + 0.1 * ref.mean[c];
    ev[c] = 0.9 * rv0[c] + 0.1 * ref.var_unbiased[c];
  }
  require_close(rm, rt::from_vector(em), 1e-12);
  require_close(rv, rt::from_vector(ev), 1e-12);
  auto eval_ref = batch_norm_ref(x, values(rm), values(rv), w, b, false, 1e-5);
  const auto rm1 = rm.clone();
  const uint32_t v1 = rm.version();
  require_close(rt::batch_norm(x, rm, rv, w, b, false), eval_ref.out, 1e-10, 1e-12);
  require_close(rm, rm1, 0, 0);  // eval leaves the buffers alone
  CHECK(rm.version() == v1);
  auto x2 = random({6, 4}, rt::kFloat32, -1, 1, 95);
  require_close(rt::batch_norm(x2, {}, {}, {}, {}, true), batch_norm_ref(x2, {}, {}, {}, {}, true, 1e-5).out, 1e-4, 1e-5);
  auto big = random({16, 8, 32, 32}, rt::kFloat32, -1, 1, 96);
  require_thread_independent([&] { return rt::batch_norm(big, {}, {}, {}, {}, true); });
  require_throws<rt::ValueError>([&] { rt::batch_norm(rt::zeros({1, 3}), {}, {}, {}, {}, true); },
                                 {"batch_norm", "more than 1 value per channel", "[1, 3]"});
  require_throws<rt::ShapeError>([&] { rt::batch_norm(x, rt::zeros({4}, rt::kFloat64), rv, w, b, true); },
                                 {"batch_norm", "running_mean", "[4]", "[3]", "[5, 3, 4]"});
  require_throws<rt::ValueError>([&] { rt::batch_norm(x, {}, {}, w, b, false); }, {"batch_norm", "eval"});
}

// ---- embedding and dropout -------------------------------------------------------------------

TEST_CASE("embedding gathers rows, backward accumulates repeats and skips padding_idx") {
  auto w = random({6, 3}, rt::kFloat64, -1, 1, 100).requires_grad_();
  auto idx = rt::tensor({int64_t(1), int64_t(4), int64_t(1), int64_t(0), int64_t(2), int64_t(1)}, {2, 3});
  auto y = rt::embedding(w, idx, 2);
  REQUIRE(y.sizes() == Shape{2, 3, 3});
  CHECK(y.grad_fn()->name() == "EmbeddingBackward0");
  auto wv = values(w), yv = values(y);
  auto iv = idx.to_vector<int64_t>();
  for (size_t i = 0; i < iv.size(); ++i)
    for (size_t j = 0; j < 3; ++j) CHECK(yv[i * 3 + j] == wv[size_t(iv[i]) * 3 + j]);
  y.sum().backward();
  const std::vector<double> counts = {1, 3, 0, 0, 1, 0};  // row 2 is padding: no gradient
  auto g = values(w.grad());
  for (size_t r = 0; r < 6; ++r)
    for (size_t j = 0; j < 3; ++j) CHECK(g[r * 3 + j] == counts[r]);
  require_throws<rt::IndexError>([&] { rt::embedding(w, rt::tensor({int64_t(0), int64_t(6)})); },
                                 {"embedding", "index 6", "num_embeddings 6"});
  require_throws<rt::IndexError>([&] { rt::embedding(w, rt::tensor({int64_t(-1)})); }, {"index -1"});
  require_throws<rt::DTypeError>([&] { rt::embedding(w, rt::tensor({0.0f})); }, {"embedding", "float32"});
  require_throws<rt::ValueError>([&] { rt::embedding(w, idx, 6); }, {"padding_idx 6"});
}

TEST_CASE("dropout: inverted scaling, engine RNG, reproducible, argument checks") {
  auto x = random({200, 100}, rt::kFloat32, 1, 2, 110).requires_grad_();
  rt::manual_seed(3);
  auto y = rt::dropout(x, 0.3);
  CHECK(y.grad_fn()->name() == "NativeDropoutBackward0");
  auto xv = values(x), yv = values(y);
  size_t kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (yv[i] == 0) continue;
    ++kept;
    REQUIRE(yv[i] == Approx(xv[i] / 0.7).epsilon(1e-6));
  }
  CHECK(double(kept) / double(xv.size()) == Approx(0.7).margin(0.02));
  y.sum().backward();
  auto g = values(x.grad());
  for (size_t i = 0; i < xv.size(); ++i) REQUIRE(g[i] == Approx(yv[i] == 0 ? 0.0 : 1 / 0.7).epsilon(1e-6));
  rt::manual_seed(3);
  require_close(rt::dropout(x, 0.3), y, 0, 0);
  CHECK(rt::dropout(x, 0.5, false).is_same(x));
  CHECK(rt::dropout(x, 0.0).is_same(x));
  CHECK(values(rt::dropout(x, 1.0)) == std::vector<double>(xv.size(), 0.0));
  require_throws<rt::ValueError>([&] { rt::dropout(x, 1.5); }, {"dropout", "between 0 and 1", "1.5"});
  require_throws<rt::ValueError>([&] { rt::dropout(x, -0.1); }, {"dropout"});
}

// ---- attention ---------------------------------------------------------------------------------

TEST_CASE("scaled_dot_product_attention matches softmax(q k^T / sqrt(E) + mask) v") {
  auto q = random({2, 4, 3}, rt::kFloat64, -1, 1, 120), k = random({2, 5, 3}, rt::kFloat64, -1, 1, 121);
  auto v = random({2, 5, 2}, rt::kFloat64, -1, 1, 122);
  const double s = 1 / std::sqrt(3.0);
  require_close(rt::scaled_dot_product_attention(q, k, v), sdpa_ref(q, k, v, {}, s), 1e-10, 1e-12);
  require_close(rt::scaled_dot_product_attention(q, k, v, {}, 0.0, false, 0.7), sdpa_ref(q, k, v, {}, 0.7), 1e-10, 1e-12);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> causal(20), fmask(20);
  auto mv = values(random({4, 5}, rt::kFloat64, -1, 1, 123));
  std::vector<uint8_t> bits(20);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      causal[size_t(i * 5 + j)] = j <= i ? 0 : -inf;
      bits[size_t(i * 5 + j)] = (i + j) % 3 != 0;
      fmask[size_t(i * 5 + j)] = bits[size_t(i * 5 + j)] ? 0 : -inf;
    }
  require_close(rt::scaled_dot_product_attention(q, k, v, {}, 0.0, true), sdpa_ref(q, k, v, causal, s), 1e-10, 1e-12);
  auto bool_mask = rt::from_vector(bits, {4, 5}).to(rt::kBool);
  require_close(rt::scaled_dot_product_attention(q, k, v, bool_mask), sdpa_ref(q, k, v, fmask, s), 1e-10, 1e-12);
  auto add_mask = rt::from_vector(mv, {4, 5});
  require_close(rt::scaled_dot_product_attention(q, k, v, add_mask), sdpa_ref(q, k, v, mv, s), 1e-10, 1e-12);
  auto qf = q.to(rt::kFloat32), kf = k.to(rt::kFloat32), vf = v.to(rt::kFloat32);
  require_close(rt::scaled_dot_product_attention(qf, kf, vf, {}, 0.0, true), sdpa_ref(q, k, v, causal, s), 1e-5, 1e-6);
  auto q4 = random({2, 3, 4, 8}, rt::kFloat32, -1, 1, 124);
  rt::manual_seed(1);
  auto dropped = rt::scaled_dot_product_attention(q4, q4, q4, {}, 0.2);
  CHECK(dropped.sizes() == Shape{2, 3, 4, 8});
  require_throws<rt::ShapeError>([&] { rt::scaled_dot_product_attention(q, random({2, 5, 4}), v); },
                                 {"scaled_dot_product_attention", "[2, 4, 3]", "[2, 5, 4]", "[2, 5, 2]"});
  require_throws<rt::ShapeError>([&] { rt::scaled_dot_product_attention(q, k, random({2, 6, 2})); }, {"dimension -2 of value"});
  require_throws<rt::ValueError>([&] { rt::scaled_dot_product_attention(q, k, v, bool_mask, 0.0, true); }, {"is_causal"});
  require_throws<rt::ShapeError>([&] { rt::scaled_dot_product_attention(q, k, v, rt::ones({3, 5}, rt::kBool)); },
                                 {"scaled_dot_product_attention", "[3, 5]"});
  require_throws<rt::ValueError>([&] { rt::scaled_dot_product_attention(q, k, v, {}, 1.0); }, {"dropout_p"});
}

// ---- gradients -----------------------------------------------------------------------------------

TEST_CASE("gradcheck: every differentiable nn functional op") {
  using rt::testing::GradCase;
  auto t6 = random_int({6}, 0, 4, 200);
  t6.data_ptr<int64_t>()[2] = 1;
  auto cw = random({4}, rt::kFloat64, 0.3, 2.0, 201);
  auto t_sp = random_int({2, 3}, 0, 3, 202);
  auto bce_t = random({3, 4}, rt::kFloat64, 0, 1, 203);
  auto rm = random({3}, rt::kFloat64, -0.5, 0.5, 204), rv = random({3}, rt::kFloat64, 0.5, 1.5, 205);
  auto emb_idx = rt::tensor({int64_t(0), int64_t(3), int64_t(3), int64_t(1), int64_t(4)});
  auto bmask = rt::ones({3, 4}, rt::kBool).tril(1);
  auto fmask = random({3, 4}, rt::kFloat64, -1, 1, 206);
  rt::testing::run_grad_cases({
      {"softmax_last", {{3, 5}}, [](const TensorList& x) { return rt::softmax(x[0], -1); }},
      {"softmax_mid", {{2, 3, 4}}, [](const TensorList& x) { return rt::softmax(x[0], 1); }},
      {"log_softmax_last", {{3, 5}}, [](const TensorList& x) { return rt::log_softmax(x[0], 1); }},
      {"log_softmax_first", {{3, 2, 2}}, [](const TensorList& x) { return rt::log_softmax(x[0], 0); }},
      {"cross_entropy", {{6, 4}}, [&](const TensorList& x) { return rt::cross_entropy(x[0], t6); }},
      {"cross_entropy_weighted", {{6, 4}}, [&](const TensorList& x) { return rt::cross_entropy(x[0], t6, cw); }},
      {"cross_entropy_ignore", {{6, 4}}, [&](const TensorList& x) { return rt::cross_entropy(x[0], t6, cw, 1); }},
      {"cross_entropy_smoothing", {{6, 4}},
       [&](const TensorList& x) { return rt::cross_entropy(x[0], t6, {}, -100, "mean", 0.2); }},
      {"cross_entropy_all", {{6, 4}}, [&](const TensorList& x) { return rt::cross_entropy(x[0], t6, cw, 1, "mean", 0.3); }},
      {"cross_entropy_sum", {{6, 4}}, [&](const TensorList& x) { return rt::cross_entropy(x[0], t6, cw, 2, "sum", 0.1); }},
      {"cross_entropy_none_spatial", {{2, 3, 3}},
       [&](const TensorList& x) { return rt::cross_entropy(x[0], t_sp, {}, 0, "none", 0.15); }},
      {"nll_loss_weighted_ignore", {{6, 4}}, [&](const TensorList& x) { return rt::nll_loss(x[0], t6, cw, 1); }},
      {"nll_loss_none", {{2, 3, 3}}, [&](const TensorList& x) { return rt::nll_loss(x[0], t_sp, {}, -100, "none"); }},
      {"mse_loss", {{3, 4}, {3, 4}}, [](const TensorList& x) { return rt::mse_loss(x[0], x[1]); }},
      {"mse_loss_broadcast_none", {{3, 4}, {4}}, [](const TensorList& x) { return rt::mse_loss(x[0], x[1], "none"); }},
      {"bce_logits", {{3, 4}, {3, 4}},
       [](const TensorList& x) { return rt::binary_cross_entropy_with_logits(x[0], x[1], {}, "sum"); }, -3, 3},
      {"bce_logits_weights", {{3, 4}, {3, 1}, {4}},
       [&](const TensorList& x) { return rt::binary_cross_entropy_with_logits(x[0], bce_t, x[1], "mean", x[2]); }, 0.2, 2},
      {"bce_logits_none", {{3, 4}, {4}},
       [&](const TensorList& x) { return rt::binary_cross_entropy_with_logits(x[0], bce_t, {}, "none", x[1]); }, 0.2, 2},
      {"layer_norm_affine", {{3, 5}, {5}, {5}}, [](const TensorList& x) { return rt::layer_norm(x[0], {5}, x[1], x[2]); }},
      {"layer_norm_2d", {{2, 3, 4}, {3, 4}}, [](const TensorList& x) { return rt::layer_norm(x[0], {3, 4}, x[1]); }},
      {"batch_norm_train", {{4, 3, 2}, {3}, {3}},
       [](const TensorList& x) { return rt::batch_norm(x[0], {}, {}, x[1], x[2], true); }},
      {"batch_norm_train_2d", {{5, 3}}, [](const TensorList& x) { return rt::batch_norm(x[0], {}, {}, {}, {}, true); }},
      {"batch_norm_eval", {{4, 3, 2}, {3}, {3}},
       [&](const TensorList& x) { return rt::batch_norm(x[0], rm, rv, x[1], x[2], false); }},
      {"embedding", {{5, 3}}, [&](const TensorList& x) { return rt::embedding(x[0], emb_idx); }},
      {"embedding_unused_padding", {{5, 3}}, [&](const TensorList& x) { return rt::embedding(x[0], emb_idx, 2); }},
      {"dropout_fixed_seed", {{4, 5}},
       [](const TensorList& x) {
         rt::manual_seed(11);
         return rt::dropout(x[0], 0.4);
       }},
      {"sdpa", {{2, 3, 2}, {2, 4, 2}, {2, 4, 3}},
       [](const TensorList& x) { return rt::scaled_dot_product_attention(x[0], x[1], x[2]); }},
      {"sdpa_causal", {{2, 4, 2}, {2, 4, 2}, {2, 4, 3}},
       [](const TensorList& x) { return rt::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); }},
      {"sdpa_bool_mask", {{3, 2}, {4, 2}, {4, 2}},
       [&](const TensorList& x) { return rt::scaled_dot_product_attention(x[0], x[1], x[2], bmask); }},
      {"sdpa_float_mask_scale", {{1, 3, 2}, {1, 4, 2}, {1, 4, 2}},
       [&](const TensorList& x) { return rt::scaled_dot_product_attention(x[0], x[1], x[2], fmask, 0.0, false, 0.9); }},
  });
}

TEST_CASE("gradients in float32 and through large, parallel inputs agree with float64") {
  auto x64 = random({80, 500}, rt::kFloat64, -2, 2, 300).requires_grad_();
  auto t = random_int({80}, 0, 500, 301);
  auto cw = random({500}, rt::kFloat64, 0.5, 1.5, 302);
  auto x32 = x64.detach().to(rt::kFloat32).requires_grad_();
  auto g64 = rt::autograd::grad({rt::cross_entropy(x64, t, cw, 3, "mean", 0.1)}, {x64})[0];
  auto g32 = rt::autograd::grad({rt::cross_entropy(x32, t, cw.to(rt::kFloat32), 3, "mean", 0.1)}, {x32})[0];
  require_close(g32, g64, 1e-3, 1e-7);
  auto w = random({80, 500}, rt::kFloat64, -1, 1, 303);
  auto s64 = rt::autograd::grad({(rt::softmax(x64, 1) * w).sum()}, {x64})[0];
  auto s32 = rt::autograd::grad({(rt::softmax(x32, 1) * w.to(rt::kFloat32)).sum()}, {x32})[0];
  require_close(s32, s64, 1e-3, 1e-6);
  auto l64 = rt::autograd::grad({(rt::log_softmax(x64, 0) * w).sum()}, {x64})[0];
  auto l32 = rt::autograd::grad({(rt::log_softmax(x32, 0) * w.to(rt::kFloat32)).sum()}, {x32})[0];
  require_close(l32, l64, 1e-3, 1e-5);
}
