// The per-level row kernels of kernels/cpu/isa_kernels.h (softmax, layer_norm, column sums, cross
// entropy) at every level this CPU runs, against float64 references, and the ops that use them
// (softmax, log_softmax, layer_norm, sum, mean, cross_entropy on float32) against the float64 path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/cpu_capability.h"
#include "cpu/isa_kernels.h"
#include "philox.h"
#include "rt/parallel.h"
#include "rt/rt.h"
#include "cpu_levels.h"
#include "testing.h"

using rt::cpu::CpuCapability;
using rt::testing::LevelGuard;
using rt::testing::supported_levels;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct ThreadGuard {
  int saved = rt::get_num_threads();
  ~ThreadGuard() { rt::set_num_threads(saved); }
};

std::vector<float> random_floats(int64_t n, double lo, double hi, uint64_t seed) {
  auto v = rt::testing::values(rt::testing::random({n}, rt::kFloat32, lo, hi, seed));
  return std::vector<float>(v.begin(), v.end());
}

// Rows of n that exercise the edge cases: -inf entries, an all -inf row, huge magnitudes, a NaN.
std::vector<float> softmax_rows_input(int64_t rows, int64_t n, uint64_t seed) {
  std::vector<float> x = random_floats(rows * n, -8, 8, seed);
  if (rows > 1) x[size_t(n + n / 2)] = -kInf, x[size_t(n)] = -kInf;
  if (rows > 2) std::fill(x.begin() + 2 * n, x.begin() + 3 * n, -kInf);
  if (rows > 3)
    for (int64_t j = 0; j < n; ++j) x[size_t(3 * n + j)] = (j % 2 ? 3e38f : -3e38f) * float(j % 3);
  if (rows > 4) x[size_t(4 * n + n - 1)] = 1e30f;
  if (rows > 5) x[size_t(5 * n)] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

std::vector<double> softmax64(const float* x, int64_t n, bool log) {
  double m = -INFINITY;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, double(x[j]));
  double s = 0;
  for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[j]) - m);
  bool nan = false;
  for (int64_t j = 0; j < n; ++j) nan |= std::isnan(x[j]);
  std::vector<double> y(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const double v = log ? double(x[j]) - m - std::log(s) : std::exp(double(x[j]) - m) / s;
    y[size_t(j)] = nan || std::isinf(m) ? NAN : v;  // PyTorch: an all -inf row gives NaN
  }
  return y;
}

// |got - ref| within atol + rtol * |ref|, NaN where ref is NaN, equal infinities.
bool close(double got, double ref, double rtol, double atol) {
  if (std::isnan(ref)) return std::isnan(got);
  if (std::isinf(ref)) return got == ref;
  return std::fabs(got - ref) <= atol + rtol * std::fabs(ref);
}

}  // namespace

TEST_CASE("isa rows: softmax and log_softmax rows within float64 at every level, with -inf and huge entries",
          "[isa][softmax]") {
  for (int64_t n : {1, 3, 16, 17, 80, 1000, 2500}) {
    const int64_t rows = 7;
    const std::vector<float> x = softmax_rows_input(rows, n, uint64_t(n));
    for (CpuCapability level : supported_levels()) {
      const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
      for (bool log : {false, true}) {
        std::vector<float> y(x.size());
        k.softmax_rows_f32(y.data(), x.data(), rows, n, log);
        for (int64_t r = 0; r < rows; ++r) {
          const std::vector<double> ref = softmax64(x.data() + r * n, n, log);
          for (int64_t j = 0; j < n; ++j) {
            INFO(rt::cpu::capability_name(level) << " log " << log << " n " << n << " row " << r << " col " << j
                                                 << ": " << y[size_t(r * n + j)] << " vs " << ref[size_t(j)]);
            REQUIRE(close(y[size_t(r * n + j)], ref[size_t(j)], 2e-6, log ? 2e-6 : 1e-9));
          }
        }
      }
    }
  }
}

TEST_CASE("isa rows: softmax backward rows and strided columns within float64 at every level", "[isa][softmax]") {
  const int64_t rows = 5, n = 1037, w = 21, stride = 40;
  const std::vector<float> x = random_floats(rows * n, -6, 6, 1), g = random_floats(rows * n, -1, 1, 2);
  for (CpuCapability level : supported_levels()) {
    const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
    for (bool log : {false, true}) {
      INFO(rt::cpu::capability_name(level) << " log " << log);
      std::vector<float> y(x.size()), gx(x.size());
      k.softmax_rows_f32(y.data(), x.data(), rows, n, log);
      k.softmax_backward_rows_f32(gx.data(), y.data(), g.data(), rows, n, log);
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<double> p = softmax64(x.data() + r * n, n, false);
        double dot = 0, gs = 0;
        for (int64_t j = 0; j < n; ++j) dot += double(g[size_t(r * n + j)]) * p[size_t(j)], gs += g[size_t(r * n + j)];
        for (int64_t j = 0; j < n; ++j) {
          const double gj = g[size_t(r * n + j)];
          const double ref = log ? gj - p[size_t(j)] * gs : p[size_t(j)] * (gj - dot);
          REQUIRE(close(gx[size_t(r * n + j)], ref, 1e-5, 1e-6));
        }
      }
      // Columns: a [n2, stride] block, softmax over d of columns [0, w).
      const int64_t n2 = 33;
      const std::vector<float> xc = random_floats(n2 * stride, -6, 6, 3), gc = random_floats(n2 * stride, -1, 1, 4);
      std::vector<float> yc(xc.size(), 7.f), gxc(xc.size(), 7.f);
      k.softmax_cols_f32(yc.data(), xc.data(), n2, stride, w, log);
      k.softmax_backward_cols_f32(gxc.data(), yc.data(), gc.data(), n2, stride, w, log);
      for (int64_t j = 0; j < stride; ++j) {
        std::vector<float> col(static_cast<size_t>(n2));
        for (int64_t d = 0; d < n2; ++d) col[size_t(d)] = xc[size_t(d * stride + j)];
        const std::vector<double> ref = softmax64(col.data(), n2, log), p = softmax64(col.data(), n2, false);
        double dot = 0, gs = 0;
        for (int64_t d = 0; d < n2; ++d) dot += gc[size_t(d * stride + j)] * p[size_t(d)], gs += gc[size_t(d * stride + j)];
        for (int64_t d = 0; d < n2; ++d) {
          const size_t e = size_t(d * stride + j);
          if (j >= w) {  // outside the block: untouched
            REQUIRE(yc[e] == 7.f);
            REQUIRE(gxc[e] == 7.f);
            continue;
          }
          REQUIRE(close(yc[e], ref[size_t(d)], 2e-6, 1e-7));
          const double gref = log ? gc[e] - p[size_t(d)] * gs : p[size_t(d)] * (gc[e] - dot);
          REQUIRE(close(gxc[e], gref, 1e-5, 1e-6));
        }
      }
    }
  }
}

TEST_CASE("isa rows: layer_norm forward and backward within float64 at every level, with and without affine",
          "[isa][layer_norm]") {
  for (int64_t d : {1, 5, 64, 200, 1500}) {
    const int64_t rows = 9;
    std::vector<float> x = random_floats(rows * d, -3, 5, uint64_t(d)), g = random_floats(rows * d, -1, 1, 7);
    const std::vector<float> w = random_floats(d, 0.5, 1.5, 8), b = random_floats(d, -1, 1, 9);
    for (int64_t j = 0; j < d; ++j) x[size_t(j)] = 1e3f + float(j % 3);  // a large mean
    for (CpuCapability level : supported_levels()) {
      const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
      for (bool affine : {false, true}) {
        INFO(rt::cpu::capability_name(level) << " d " << d << " affine " << affine);
        const float* wp = affine ? w.data() : nullptr;
        std::vector<float> y(x.size()), dx(x.size()), dw(static_cast<size_t>(d), 0.f), db(static_cast<size_t>(d), 0.f);
        std::vector<double> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
        k.layer_norm_rows_f32(y.data(), mean.data(), rstd.data(), x.data(), wp, affine ? b.data() : nullptr, rows, d,
                              1e-5f);
        k.layer_norm_backward_rows_f32(dx.data(), dw.data(), db.data(), x.data(), wp, g.data(), mean.data(),
                                       rstd.data(), rows, d);
        std::vector<double> dw64(static_cast<size_t>(d), 0.0), db64(static_cast<size_t>(d), 0.0);
        for (int64_t r = 0; r < rows; ++r) {
          const float* xr = x.data() + r * d;
          const float* gr = g.data() + r * d;
          double mu = 0, var = 0;
          for (int64_t j = 0; j < d; ++j) mu += xr[j];
          mu /= double(d);
          for (int64_t j = 0; j < d; ++j) var += (xr[j] - mu) * (xr[j] - mu);
          const double rs = 1.0 / std::sqrt(var / double(d) + 1e-5);
          REQUIRE(close(mean[size_t(r)], mu, 1e-6, 1e-6));
          REQUIRE(close(rstd[size_t(r)], rs, 1e-4, 0));
          double sa = 0, sb = 0;
          for (int64_t j = 0; j < d; ++j) {
            const double xh = (xr[j] - mu) * rs, gw = gr[j] * (affine ? w[size_t(j)] : 1.0);
            REQUIRE(close(y[size_t(r * d + j)], affine ? xh * w[size_t(j)] + b[size_t(j)] : xh, 1e-4, 2e-4));
            sa += gw, sb += gw * xh;
            dw64[size_t(j)] += gr[j] * xh, db64[size_t(j)] += gr[j];
          }
          for (int64_t j = 0; j < d; ++j) {
            const double xh = (xr[j] - mu) * rs, gw = gr[j] * (affine ? w[size_t(j)] : 1.0);
            REQUIRE(close(dx[size_t(r * d + j)], rs * (gw - sa / double(d) - xh * sb / double(d)), 1e-3, 2e-4 * rs));
          }
        }
        for (int64_t j = 0; j < d; ++j) {
          REQUIRE(close(dw[size_t(j)], dw64[size_t(j)], 1e-4, 1e-4));
          REQUIRE(close(db[size_t(j)], db64[size_t(j)], 1e-5, 1e-5));
        }
      }
    }
  }
}

TEST_CASE("isa rows: column sums are the float64 sums in row order, the same bits at every level", "[isa][sum]") {
  for (int64_t cols : {1, 3, 8, 31, 64, 67, 1000}) {
    const int64_t rows = 131, stride = cols + 5;
    const std::vector<float> x = random_floats(rows * stride, -100, 100, uint64_t(cols));
    std::vector<double> x64(x.begin(), x.end());
    std::vector<double> ref(static_cast<size_t>(cols), 0.5);  // accumulates onto what acc holds
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) ref[size_t(c)] += double(x[size_t(r * stride + c)]);
    for (CpuCapability level : supported_levels()) {
      INFO(rt::cpu::capability_name(level) << " cols " << cols);
      std::vector<double> acc(static_cast<size_t>(cols), 0.5), acc64(static_cast<size_t>(cols), 0.5);
      rt::cpu::isa_kernels(level).sum_cols_f32(acc.data(), x.data(), rows, stride, cols);
      rt::cpu::isa_kernels(level).sum_cols_f64(acc64.data(), x64.data(), rows, stride, cols);
      CHECK(std::memcmp(acc.data(), ref.data(), sizeof(double) * size_t(cols)) == 0);
      CHECK(std::memcmp(acc64.data(), ref.data(), sizeof(double) * size_t(cols)) == 0);
    }
  }
}

TEST_CASE("isa rows: cross entropy statistics and backward rows within float64 at every level", "[isa][loss]") {
  const int64_t rows = 4, n = 1003;
  std::vector<float> x = random_floats(rows * n, -10, 10, 11);
  x[5] = -kInf;
  const std::vector<float> w = random_floats(n, 0.1, 2, 12);
  for (CpuCapability level : supported_levels()) {
    const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
    std::vector<double> lse(static_cast<size_t>(rows)), wdot(static_cast<size_t>(rows)), xsum(static_cast<size_t>(rows));
    k.log_softmax_stats_f32(lse.data(), wdot.data(), x.data(), w.data(), rows, n);
    k.log_softmax_stats_f32(lse.data(), xsum.data(), x.data(), nullptr, rows, n);
    for (int64_t r = 0; r < rows; ++r) {
      INFO(rt::cpu::capability_name(level) << " row " << r);
      const float* xr = x.data() + r * n;
      double m = -INFINITY, s = 0, wd = 0, xs = 0;
      for (int64_t j = 0; j < n; ++j) m = std::max(m, double(xr[j]));
      for (int64_t j = 0; j < n; ++j) s += std::exp(xr[j] - m);
      for (int64_t j = 1; j < n; ++j) wd += double(w[size_t(j)]) * xr[j], xs += xr[j];
      REQUIRE(close(lse[size_t(r)], m + std::log(s), 1e-6, 1e-6));
      if (r > 0) {  // row 0 holds -inf: its weighted sum is -inf
        REQUIRE(close(wdot[size_t(r)], wd + double(w[0]) * xr[0], 1e-5, 1e-3));
        REQUIRE(close(xsum[size_t(r)], xs + xr[0], 1e-5, 1e-3));
      } else {
        REQUIRE(wdot[0] == -INFINITY);
      }
      std::vector<float> gx(static_cast<size_t>(n));
      k.cross_entropy_backward_row_f32(gx.data(), xr, w.data(), n, float(lse[size_t(r)]), 0.7f, 0.01f);
      for (int64_t j = 0; j < n; ++j)
        REQUIRE(close(gx[size_t(j)], std::exp(xr[j] - lse[size_t(r)]) * 0.7 - 0.01 * w[size_t(j)], 1e-5, 1e-7));
      k.cross_entropy_backward_row_f32(gx.data(), xr, nullptr, n, float(lse[size_t(r)]), 1.f, 0.f);
      for (int64_t j = 0; j < n; ++j) REQUIRE(close(gx[size_t(j)], std::exp(xr[j] - lse[size_t(r)]), 1e-5, 1e-9));
    }
  }
}

TEST_CASE("isa rows: Philox uniforms are the scalar generator's bit for bit at every level, across a counter carry",
          "[isa][random]") {
  const uint64_t key = 0x123456789abcdef0ull;
  for (uint64_t counter : {uint64_t(0), uint64_t(0xfffffff9ull), uint64_t(0x1234ffffffffull)}) {
    for (int64_t n : {1, 7, 64, 1001}) {
      std::vector<float> expect(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const rt::detail::PhiloxBlock w = rt::detail::philox_block(counter + uint64_t(i / 4), key);
        expect[size_t(i)] = float(double(w[size_t(i % 4)] >> 8) * 0x1p-24);
      }
      for (CpuCapability level : supported_levels()) {
        INFO(rt::cpu::capability_name(level) << " counter " << counter << " n " << n);
        std::vector<float> got(static_cast<size_t>(n) + 1, -1.f);
        rt::cpu::isa_kernels(level).philox_uniform_f32(got.data(), n, counter, key);
        CHECK(std::memcmp(got.data(), expect.data(), sizeof(float) * size_t(n)) == 0);
        CHECK(got[size_t(n)] == -1.f);  // nothing written past n
      }
    }
  }
}

TEST_CASE("isa rows: dropout forward and backward match the generic loop bit for bit at every level",
          "[isa][dropout]") {
  const int64_t n = 1003;
  std::vector<float> x = random_floats(n, -3, 3, 61), u = random_floats(n, 0, 1, 62), g = random_floats(n, -1, 1, 63);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = -kInf;
  const float keep = 0.7f, scale = float(1.0 / 0.7);
  for (CpuCapability level : supported_levels()) {
    INFO(rt::cpu::capability_name(level));
    const rt::cpu::IsaKernels& k = rt::cpu::isa_kernels(level);
    std::vector<float> out(static_cast<size_t>(n)), gx(static_cast<size_t>(n));
    std::vector<uint8_t> mask(static_cast<size_t>(n) + 1, 9);
    k.dropout_f32(out.data(), mask.data(), x.data(), u.data(), n, keep, scale);
    k.dropout_backward_f32(gx.data(), g.data(), mask.data(), n, scale);
    CHECK(mask[size_t(n)] == 9);
    for (int64_t i = 0; i < n; ++i) {
      const bool kept = u[size_t(i)] < keep;
      const float o = x[size_t(i)] * (kept ? scale : 0.f), d = g[size_t(i)] * (kept ? scale : 0.f);
      REQUIRE(int(mask[size_t(i)]) == int(kept));
      REQUIRE(std::memcmp(&out[size_t(i)], &o, 4) == 0);
      REQUIRE(std::memcmp(&gx[size_t(i)], &d, 4) == 0);
    }
  }
}

TEST_CASE("isa rows: rand and dropout on float32 give the generic path's values", "[isa][dropout]") {
  // The generic path: float64 draws the same counters 2 per block, so compare float32 against the
  // scalar generator directly, and dropout on a contiguous tensor against the same op on a strided one.
  rt::manual_seed(5);
  const rt::Tensor r = rt::rand({4099});
  rt::manual_seed(5);
  const uint64_t key = rt::default_generator().seed();
  const uint64_t offset = rt::default_generator().reserve(0);
  for (int64_t i = 0; i < 4099; ++i) {
    const rt::detail::PhiloxBlock w = rt::detail::philox_block(offset + uint64_t(i / 4), key);
    REQUIRE(r.data_ptr<float>()[i] == float(double(w[size_t(i % 4)] >> 8) * 0x1p-24));
  }
  const rt::Tensor base = rt::testing::random({300, 2, 70}, rt::kFloat32, -2, 2, 64);
  const rt::Tensor strided = base.select(1, 0), dense = strided.contiguous();
  rt::Tensor xd = dense.detach().requires_grad_(true), xs = strided.detach().requires_grad_(true);
  rt::manual_seed(9);
  rt::Tensor yd = rt::dropout(xd, 0.3, true);
  rt::manual_seed(9);
  rt::Tensor ys = rt::dropout(xs, 0.3, true);
  REQUIRE(std::memcmp(yd.raw_data(), ys.contiguous().raw_data(), sizeof(float) * 300 * 70) == 0);
  const rt::Tensor g = rt::testing::random({300, 70}, rt::kFloat32, -1, 1, 65);
  yd.backward(g);
  ys.backward(g.t().contiguous().t());  // a strided gradient takes the generic loop
  REQUIRE(std::memcmp(xd.grad().raw_data(), xs.grad().contiguous().raw_data(), sizeof(float) * 300 * 70) == 0);
}

// ---- the ops on float32, against float64 and across thread counts -------------------------------

TEST_CASE("isa rows: softmax ops on float32 match float64 over every dim at every level", "[isa][softmax]") {
  LevelGuard guard;
  const rt::Tensor x = rt::testing::random({6, 70, 9}, rt::kFloat32, -8, 8, 21);
  for (CpuCapability level : supported_levels()) {
    rt::cpu::set_cpu_capability(level);
    for (int64_t dim : {0, 1, 2}) {
      for (bool log : {false, true}) {
        INFO(rt::cpu::capability_name(level) << " dim " << dim << " log " << log);
        rt::Tensor xg = x.detach().requires_grad_(true), x64 = x.to(rt::kFloat64).requires_grad_(true);
        rt::Tensor g = rt::testing::random({6, 70, 9}, rt::kFloat32, -1, 1, 22);
        rt::Tensor y = log ? rt::log_softmax(xg, dim) : rt::softmax(xg, dim);
        rt::Tensor y64 = log ? rt::log_softmax(x64, dim) : rt::softmax(x64, dim);
        rt::testing::require_close(y, y64.to(rt::kFloat32), 1e-5, log ? 2e-6 : 1e-7);  // log: x - shift rounds
        y.backward(g);
        y64.backward(g.to(rt::kFloat64));
        rt::testing::require_close(xg.grad(), x64.grad().to(rt::kFloat32), 1e-4, 1e-6);
      }
    }
  }
}

TEST_CASE("isa rows: layer_norm on float32 matches float64 with and without affine", "[isa][layer_norm]") {
  LevelGuard guard;
  for (CpuCapability level : supported_levels()) {
    rt::cpu::set_cpu_capability(level);
    for (bool affine : {false, true}) {
      INFO(rt::cpu::capability_name(level) << " affine " << affine);
      rt::Tensor x = rt::testing::random({300, 3, 64}, rt::kFloat32, -2, 3, 31).requires_grad_(true);
      rt::Tensor w = rt::testing::random({3, 64}, rt::kFloat32, 0.5, 1.5, 32).requires_grad_(true);
      rt::Tensor b = rt::testing::random({3, 64}, rt::kFloat32, -1, 1, 33).requires_grad_(true);
      rt::Tensor x64 = x.detach().to(rt::kFloat64).requires_grad_(true);
      rt::Tensor w64 = w.detach().to(rt::kFloat64).requires_grad_(true);
      rt::Tensor b64 = b.detach().to(rt::kFloat64).requires_grad_(true);
      rt::Tensor g = rt::testing::random({300, 3, 64}, rt::kFloat32, -1, 1, 34);
      rt::Tensor y = affine ? rt::layer_norm(x, {3, 64}, w, b) : rt::layer_norm(x, {3, 64});
      rt::Tensor y64 = affine ? rt::layer_norm(x64, {3, 64}, w64, b64) : rt::layer_norm(x64, {3, 64});
      rt::testing::require_close(y, y64.to(rt::kFloat32), 1e-4, 1e-5);
      y.backward(g);
      y64.backward(g.to(rt::kFloat64));
      rt::testing::require_close(x.grad(), x64.grad().to(rt::kFloat32), 1e-3, 1e-5);
      if (affine) {
        rt::testing::require_close(w.grad(), w64.grad().to(rt::kFloat32), 1e-4, 1e-4);
        rt::testing::require_close(b.grad(), b64.grad().to(rt::kFloat32), 1e-5, 1e-5);
      }
    }
  }
}

TEST_CASE("isa rows: sum and mean over any dims of 2-D to 4-D float32 tensors, contiguous or not", "[isa][sum]") {
  ThreadGuard threads;
  const std::vector<std::pair<rt::Shape, std::vector<rt::Shape>>> cases = {
      {{1024, 300}, {{0}, {1}, {0, 1}}},
      {{32, 64, 48}, {{0}, {1}, {2}, {0, 1}, {1, 2}, {0, 2}}},
      {{5, 6, 7, 300}, {{0}, {0, 1}, {0, 1, 2}, {3}, {1, 3}, {0, 2}}},
  };
  for (const auto& [shape, dim_sets] : cases) {
    const rt::Tensor base = rt::testing::random(shape, rt::kFloat32, -10, 10, 41);
    std::vector<rt::Tensor> inputs = {base, base.transpose(0, 1)};  // the transpose: another memory order
    for (const rt::Tensor& x : inputs) {
      const rt::Tensor x64 = x.to(rt::kFloat64);
      for (const rt::Shape& dims : dim_sets) {
        for (bool keepdim : {false, true}) {
          INFO("shape " << rt::format_shape(x.sizes()) << " contiguous " << x.is_contiguous() << " dims "
                        << rt::format_shape(dims) << " keepdim " << keepdim);
          rt::set_num_threads(1);
          const rt::Tensor s1 = rt::sum(x, dims, keepdim), m1 = rt::mean(x, dims, keepdim);
          rt::set_num_threads(2);
          const rt::Tensor s2 = rt::sum(x, dims, keepdim), m2 = rt::mean(x, dims, keepdim);
          REQUIRE(std::memcmp(s1.raw_data(), s2.raw_data(), sizeof(float) * size_t(s1.numel())) == 0);
          REQUIRE(std::memcmp(m1.raw_data(), m2.raw_data(), sizeof(float) * size_t(m1.numel())) == 0);
          rt::testing::require_close(s1, rt::sum(x64, dims, keepdim).to(rt::kFloat32), 1e-5, 1e-4);
          rt::testing::require_close(m1, rt::mean(x64, dims, keepdim).to(rt::kFloat32), 1e-5, 1e-6);
        }
      }
    }
  }
  // Leading-dim sums read in place are float64 sums rounded once: the bias gradient of [N, C].
  const rt::Tensor x = rt::testing::random({3000, 70}, rt::kFloat32, -1, 1, 42);
  const rt::Tensor exact = rt::sum(x.to(rt::kFloat64), {0}).to(rt::kFloat32);
  CHECK(std::memcmp(rt::sum(x, {0}).raw_data(), exact.raw_data(), sizeof(float) * 70) == 0);
}

namespace {

// Cross entropy of float32 logits [N, C] written out in float64: per-sample loss and d loss / d x
// (the composition log_softmax + nll_loss with label smoothing, weights, ignore_index, reduction).
struct CrossEntropy64 {
  std::vector<double> loss, grad;  // per sample ('none') or the reduced scalar; grad of the reduced loss
  double reduced = 0;
};
CrossEntropy64 cross_entropy64(const std::vector<double>& x, const std::vector<int64_t>& t, const std::vector<double>& w,
                               int64_t N, int64_t C, int64_t ignore, double eps, const std::string& red) {
  CrossEntropy64 r;
  r.loss.assign(static_cast<size_t>(N), 0.0);
  r.grad.assign(static_cast<size_t>(N * C), 0.0);
  double total_w = 0;
  std::vector<std::vector<double>> p(static_cast<size_t>(N));
  for (int64_t s = 0; s < N; ++s) {
    if (t[size_t(s)] == ignore) continue;
    const double* xr = x.data() + s * C;
    double m = -INFINITY, z = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
    for (int64_t c = 0; c < C; ++c) z += std::exp(xr[c] - m);
    const double lse = m + std::log(z);
    const double wt = w.empty() ? 1.0 : w[size_t(t[size_t(s)])];
    double l = -(1 - eps) * wt * (xr[t[size_t(s)]] - lse);
    for (int64_t c = 0; c < C; ++c) l -= eps / double(C) * (w.empty() ? 1.0 : w[size_t(c)]) * (xr[c] - lse);
    r.loss[size_t(s)] = l;
    total_w += wt;
    double wsum = 0;
    for (int64_t c = 0; c < C; ++c) wsum += w.empty() ? 1.0 : w[size_t(c)];
    for (int64_t c = 0; c < C; ++c) {
      const double pc = std::exp(xr[c] - lse);
      r.grad[size_t(s * C + c)] = pc * ((1 - eps) * wt + eps / double(C) * wsum) -
                                  eps / double(C) * (w.empty() ? 1.0 : w[size_t(c)]) -
                                  (c == t[size_t(s)] ? (1 - eps) * wt : 0.0);
    }
  }
  for (double l : r.loss) r.reduced += l;
  const double scale = red == "mean" ? 1.0 / total_w : 1.0;
  if (red == "mean") r.reduced /= total_w;
  for (double& g : r.grad) g *= scale;
  return r;
}

}  // namespace

TEST_CASE("isa rows: cross_entropy on float32 rows matches the float64 composition with every option",
          "[isa][loss]") {
  LevelGuard guard;
  for (auto [N, C] : {std::pair<int64_t, int64_t>{64, 80}, {9, 10000}, {33, 3}}) {
    const rt::Tensor x = rt::testing::random({N, C}, rt::kFloat32, -6, 6, 51);
    const rt::Tensor w = rt::testing::random({C}, rt::kFloat32, 0.2, 2, 53);
    auto xv = rt::testing::values(x), wv = rt::testing::values(w);
    for (CpuCapability level : supported_levels()) {
      rt::cpu::set_cpu_capability(level);
      for (bool weighted : {false, true}) {
        for (double eps : {0.0, 0.2}) {
          for (std::string red : {"mean", "sum", "none"}) {
            for (int64_t ignore : {int64_t(-100), int64_t(7 % C)}) {
              rt::Tensor t = rt::testing::random_int({N}, 0, C, 52);
              t.data_ptr<int64_t>()[1] = ignore;  // ignored, and with ignore = 7 a class of other rows too
              t.data_ptr<int64_t>()[4] = 7 % C;
              const std::vector<int64_t> tv(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + N);
              INFO(rt::cpu::capability_name(level) << " N " << N << " C " << C << " weighted " << weighted << " eps "
                                                   << eps << " " << red << " ignore " << ignore);
              const CrossEntropy64 ref =
                  cross_entropy64(xv, tv, weighted ? wv : std::vector<double>{}, N, C, ignore, eps, red);
              rt::Tensor xg = x.detach().requires_grad_(true);
              rt::Tensor loss = rt::cross_entropy(xg, t, weighted ? w : rt::Tensor(), ignore, red, eps);
              if (red == "none") {
                rt::testing::require_close(loss, rt::from_vector(ref.loss, {N}).to(rt::kFloat32), 1e-5, 1e-5);
                loss.sum().backward();
              } else {
                REQUIRE(close(loss.item<double>(), ref.reduced, 1e-5, 1e-5));
                loss.backward();
              }
              rt::testing::require_close(xg.grad(), rt::from_vector(ref.grad, {N, C}).to(rt::kFloat32), 1e-4, 1e-7);
            }
          }
        }
      }
    }
  }
}
