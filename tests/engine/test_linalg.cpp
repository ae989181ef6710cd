// matmul, mm, bmm, addmm, linear: float64 naive references, float32/half/integer checks,
// autograd (gradcheck and node names) and error messages.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::TensorList;
using rt::testing::random;
using rt::testing::require_close;
using rt::testing::values;

namespace {

// Naive float64 matmul with PyTorch's semantics (1-D promotion, batch broadcasting).
Tensor ref_matmul(const Tensor& a, const Tensor& b) {
  Shape sa = a.sizes(), sb = b.sizes();
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  REQUIRE(sb[sb.size() - 2] == k);
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t nb = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), nb - ba.size(), 1);
  bb.insert(bb.begin(), nb - bb.size(), 1);
  Shape batch(nb);
  for (size_t i = 0; i < nb; ++i) batch[i] = std::max(ba[i], bb[i]);
  const auto va = values(a), vb = values(b);
  const int64_t count = rt::numel_of(batch);
  std::vector<double> out(size_t(count * m * n));
  for (int64_t bi = 0; bi < count; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0, sta = 1, stb = 1;
    for (int64_t d = int64_t(nb) - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[size_t(d)];
      rem /= batch[size_t(d)];
      oa += (ba[size_t(d)] == 1 ? 0 : idx) * sta;
      ob += (bb[size_t(d)] == 1 ? 0 : idx) * stb;
      sta *= ba[size_t(d)];
      stb *= bb[size_t(d)];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += va[size_t((oa * m + i) * k + p)] * vb[size_t((ob * k + p) * n + j)];
        out[size_t((bi * m + i) * n + j)] = s;
      }
  }
  Shape shape = batch;
  if (!a1) shape.push_back(m);
  if (!b1) shape.push_back(n);
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

TEST_CASE("matmul: every rank combination matches the float64 reference and PyTorch's shapes") {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {{3}, {3}, {}},
      {{2, 3}, {3}, {2}},
      {{3}, {3, 4}, {4}},
      {{2, 3}, {3, 4}, {2, 4}},
      {{2, 2, 3}, {3, 4}, {2, 2, 4}},
      {{2, 5, 2, 3}, {3}, {2, 5, 2}},
      {{3}, {2, 3, 4}, {2, 4}},
      {{2, 3}, {4, 3, 5}, {4, 2, 5}},
      {{2, 1, 2, 3}, {5, 3, 4}, {2, 5, 2, 4}},
      {{4, 1, 3}, {1, 3, 2}, {4, 1, 2}},
      {{3, 2, 4}, {3, 4, 6}, {3, 2, 6}},
      {{2, 0, 3}, {3, 4}, {2, 0, 4}},
      {{2, 3, 0}, {2, 0, 4}, {2, 3, 4}},
      {{2, 3, 0}, {0, 4}, {2, 3, 4}},
  };
  uint64_t seed = 1;
  for (const auto& c : cases) {
    INFO(rt::format_shape(c.a) << " @ " << rt::format_shape(c.b));
    Tensor a = random(c.a, rt::kFloat64, -1, 1, seed++), b = random(c.b, rt::kFloat64, -1, 1, seed++);
    Tensor out = rt::matmul(a, b);
    CHECK(out.sizes() == c.out);
    require_close(out, ref_matmul(a, b), 1e-12, 1e-12);
    Tensor out32 = rt::matmul(a.to(rt::kFloat32), b.to(rt::kFloat32));
    CHECK(out32.dtype() == rt::kFloat32);
    require_close(out32, ref_matmul(a, b), 1e-5, 1e-5);
  }
}

TEST_CASE("matmul: transposed, strided and broadcast operands") {
  Tensor a = random({7, 5}, rt::kFloat64, -1, 1, 3), b = random({6, 7}, rt::kFloat64, -1, 1, 4);
  require_close(rt::mm(a.t(), b.t()), ref_matmul(a.t().contiguous(), b.t().contiguous()), 1e-12, 1e-12);
  Tensor big = random({9, 12}, rt::kFloat32, -1, 1, 5);
  Tensor strided = big.slice(0, 0, 9, 2).slice(1, 0, 12, 3);  // [5, 4], no unit stride
  Tensor rhs = random({4, 3}, rt::kFloat32, -1, 1, 6);
  require_close(rt::mm(strided, rhs), ref_matmul(strided.contiguous(), rhs), 1e-5, 1e-6);
  Tensor col = random({4, 1}, rt::kFloat32, -1, 1, 7).expand({4, 3});  // stride 0 columns
  require_close(rt::mm(strided, col), ref_matmul(strided.contiguous(), col.contiguous()), 1e-5, 1e-6);
  Tensor v = random({1}, rt::kFloat64, -1, 1, 8).expand({7});  // stride-0 vector
  require_close(rt::matmul(a.t(), v), ref_matmul(a.t().contiguous(), v.contiguous()), 1e-12, 1e-12);
  Tensor batch = random({3, 4, 5}, rt::kFloat64, -1, 1, 9).transpose(1, 2);  // column-major matrices
  Tensor rb = random({3, 4, 2}, rt::kFloat64, -1, 1, 10);
  require_close(rt::bmm(batch, rb), ref_matmul(batch.contiguous(), rb), 1e-12, 1e-12);
  Tensor perm = random({4, 3, 5}, rt::kFloat64, -1, 1, 11).permute({1, 0, 2});  // batch not outermost
  require_close(rt::matmul(perm, random({5, 2}, rt::kFloat64, -1, 1, 12)),
                ref_matmul(perm.contiguous(), random({5, 2}, rt::kFloat64, -1, 1, 12)), 1e-12, 1e-12);
}

TEST_CASE("matmul: large and many-batch products (threaded GEMM and parallel batches)") {
  Tensor a = random({130, 257}, rt::kFloat64, -1, 1, 20), b = random({257, 70}, rt::kFloat64, -1, 1, 21);
  require_close(rt::mm(a, b), ref_matmul(a, b), 1e-12, 1e-12);
  require_close(rt::mm(a.to(rt::kFloat32), b.to(rt::kFloat32)), ref_matmul(a, b), 1e-4, 1e-4);
  Tensor x = random({64, 12, 9}, rt::kFloat32, -1, 1, 22), y = random({64, 9, 7}, rt::kFloat32, -1, 1, 23);
  require_close(rt::bmm(x, y), ref_matmul(x, y), 1e-5, 1e-5);
  require_close(rt::matmul(x, y.select(0, 3)), ref_matmul(x, y.select(0, 3)), 1e-5, 1e-5);
}

// Note [GEMM threads]: a batch of GEMMs is bit-identical at any thread count; one threaded GEMM is
// only equal to rounding, as OpenBLAS's threaded driver may block k differently.
TEST_CASE("matmul: results do not depend on the thread count") {
  const int saved = omp_get_max_threads();
  Tensor x = random({32, 40, 33}, rt::kFloat32, -1, 1, 30), y = random({32, 33, 50}, rt::kFloat32, -1, 1, 31);
  Tensor a = random({300, 200}, rt::kFloat32, -1, 1, 32), b = random({200, 100}, rt::kFloat32, -1, 1, 33);
  omp_set_num_threads(1);
  Tensor r1 = rt::bmm(x, y), m1 = rt::mm(a, b);
  omp_set_num_threads(std::max(2, saved));
  Tensor r2 = rt::bmm(x, y), m2 = rt::mm(a, b);
  omp_set_num_threads(saved);
  require_close(r2, r1, 0, 0);
  require_close(m2, m1, 1e-5, 1e-5);
}

TEST_CASE("matmul: half, integer and mixed dtypes") {
  Tensor a = random({6, 9}, rt::kFloat64, -1, 1, 40), b = random({9, 4}, rt::kFloat64, -1, 1, 41);
  for (auto dt : {rt::kFloat16, rt::kBFloat16}) {
    Tensor out = rt::matmul(a.to(dt), b.to(dt));
    CHECK(out.dtype() == dt);
    require_close(out, ref_matmul(a.to(dt), b.to(dt)), 2e-2, 2e-2);
  }
  for (auto dt : {rt::kInt64, rt::kInt32, rt::kUInt8}) {
    Tensor ia = rt::testing::random_int({5, 7}, 0, 5, 42, dt), ib = rt::testing::random_int({3, 7, 2}, 0, 5, 43, dt);
    Tensor out = rt::matmul(ia, ib);
    CHECK(out.dtype() == dt);
    require_close(out, ref_matmul(ia, ib), 0, 0);
  }
  CHECK_THROWS_AS(rt::matmul(a, b.to(rt::kFloat32)), rt::DTypeError);
  CHECK_THAT(message_of([&] { rt::mm(a, b.to(rt::kFloat32)); }),
             Catch::Contains("mm:") && Catch::Contains("float64") && Catch::Contains("float32"));
  CHECK_THROWS_AS(rt::matmul(rt::zeros({2, 2}, rt::kBool), rt::zeros({2, 2}, rt::kBool)), rt::DTypeError);
}

TEST_CASE("bmm and addmm match the reference") {
  Tensor x = random({3, 4, 5}, rt::kFloat64, -1, 1, 50), y = random({3, 5, 2}, rt::kFloat64, -1, 1, 51);
  require_close(rt::bmm(x, y), ref_matmul(x, y), 1e-12, 1e-12);
  require_close(x.bmm(y), ref_matmul(x, y), 1e-12, 1e-12);
  Tensor a = random({4, 5}, rt::kFloat64, -1, 1, 52), b = random({5, 3}, rt::kFloat64, -1, 1, 53);
  for (const Shape& s : {Shape{4, 3}, Shape{3}, Shape{1, 3}, Shape{4, 1}, Shape{}}) {
    INFO("self " << rt::format_shape(s));
    Tensor self = random(s, rt::kFloat64, -1, 1, 54);
    Tensor ref = self.expand({4, 3}) * 0.5 + ref_matmul(a, b) * -2.0;
    require_close(rt::addmm(self, a, b, 0.5, -2.0), ref, 1e-12, 1e-12);
    require_close(rt::addmm(self.to(rt::kFloat32), a.to(rt::kFloat32), b.to(rt::kFloat32), 0.5, -2.0), ref, 1e-5, 1e-5);
  }
  Tensor nan_self = rt::full({4, 3}, std::nan(""), rt::kFloat64);
  require_close(rt::addmm(nan_self, a, b, 0.0, 1.0), ref_matmul(a, b), 1e-12, 1e-12);  // beta = 0 ignores self
}

TEST_CASE("linear: 1-D, 2-D and 3-D inputs, with and without bias") {
  Tensor w = random({6, 5}, rt::kFloat64, -1, 1, 60), bias = random({6}, rt::kFloat64, -1, 1, 61);
  for (const Shape& s : {Shape{5}, Shape{4, 5}, Shape{2, 3, 5}, Shape{0, 5}}) {
    INFO("input " << rt::format_shape(s));
    Tensor x = random(s, rt::kFloat64, -1, 1, 62);
    Tensor ref = ref_matmul(x, w.t().contiguous());
    require_close(rt::linear(x, w), ref, 1e-12, 1e-12);
    require_close(rt::linear(x, w, bias), ref + bias, 1e-12, 1e-12);
    require_close(rt::linear(x.to(rt::kFloat32), w.to(rt::kFloat32), bias.to(rt::kFloat32)), ref + bias, 1e-5, 1e-5);
  }
  Tensor xt = random({5, 4}, rt::kFloat64, -1, 1, 63).t();  // non-contiguous input
  require_close(rt::linear(xt, w, bias), ref_matmul(xt.contiguous(), w.t().contiguous()) + bias, 1e-12, 1e-12);
  Tensor bf = rt::linear(xt.to(rt::kBFloat16), w.to(rt::kBFloat16), bias.to(rt::kBFloat16));
  CHECK(bf.dtype() == rt::kBFloat16);
  require_close(bf, ref_matmul(xt.contiguous(), w.t().contiguous()) + bias, 3e-2, 3e-2);
}

TEST_CASE("linear and matmul: gradients and backward node names") {
  Tensor x = random({4, 5}, rt::kFloat64, -1, 1, 70).requires_grad_();
  Tensor w = random({3, 5}, rt::kFloat64, -1, 1, 71).requires_grad_();
  Tensor b = random({3}, rt::kFloat64, -1, 1, 72).requires_grad_();
  Tensor y = rt::linear(x, w, b);
  CHECK(y.grad_fn()->name() == "AddmmBackward0");
  CHECK(rt::linear(x, w).grad_fn()->name() == "MmBackward0");
  CHECK(rt::mm(x, w.t()).grad_fn()->name() == "MmBackward0");
  CHECK(rt::matmul(x.select(0, 0), w.select(0, 0)).grad_fn()->name() == "DotBackward0");
  CHECK(rt::matmul(x, w.select(0, 0)).grad_fn()->name() == "MvBackward0");
  CHECK(rt::bmm(x.unsqueeze(0), w.t().unsqueeze(0)).grad_fn()->name() == "BmmBackward0");
  y.sum().backward();
  // d(sum)/dx = ones @ w, d/dw = ones.T @ x, d/db = rows
  require_close(x.grad(), rt::ones({4, 3}, rt::kFloat64).matmul(w.detach()), 1e-12, 1e-12);
  require_close(w.grad(), rt::ones({3, 4}, rt::kFloat64).matmul(x.detach()), 1e-12, 1e-12);
  require_close(b.grad(), rt::full({3}, 4.0, rt::kFloat64), 1e-12, 1e-12);
}

TEST_CASE("linalg: gradcheck") {
  using rt::testing::GradCase;
  rt::testing::run_grad_cases({
      {"mm", {{3, 4}, {4, 2}}, [](const TensorList& x) { return rt::mm(x[0], x[1]); }},
      {"mm_transposed", {{4, 3}, {2, 4}}, [](const TensorList& x) { return rt::mm(x[0].t(), x[1].t()); }},
      {"matmul_dot", {{5}, {5}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_mv", {{3, 5}, {5}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_vm", {{5}, {5, 3}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_fold", {{2, 3, 4}, {4, 2}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_fold_vec", {{2, 3, 4}, {4}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_broadcast", {{2, 1, 3, 4}, {3, 4, 2}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_vec_batched", {{4}, {2, 4, 3}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"matmul_mat_batched", {{3, 4}, {2, 4, 2}}, [](const TensorList& x) { return rt::matmul(x[0], x[1]); }},
      {"bmm", {{2, 3, 4}, {2, 4, 2}}, [](const TensorList& x) { return rt::bmm(x[0], x[1]); }},
      {"addmm", {{3, 2}, {3, 4}, {4, 2}}, [](const TensorList& x) { return rt::addmm(x[0], x[1], x[2]); }},
      {"addmm_broadcast_scaled", {{2}, {3, 4}, {4, 2}},
       [](const TensorList& x) { return rt::addmm(x[0], x[1], x[2], 0.5, -1.5); }},
      {"linear", {{4, 5}, {3, 5}, {3}}, [](const TensorList& x) { return rt::linear(x[0], x[1], x[2]); }},
      {"linear_3d", {{2, 3, 5}, {4, 5}, {4}}, [](const TensorList& x) { return rt::linear(x[0], x[1], x[2]); }},
      {"linear_1d_no_bias", {{5}, {4, 5}}, [](const TensorList& x) { return rt::linear(x[0], x[1]); }},
      {"linear_transposed_input", {{5, 4}, {3, 5}, {3}}, [](const TensorList& x) { return rt::linear(x[0].t(), x[1], x[2]); }},
  });
}

TEST_CASE("linalg: shape errors name the op, both shapes, the dimension and the module") {
  Tensor a = rt::zeros({64, 784}), b = rt::zeros({128, 10});
  std::string msg;
  {
    rt::ModuleScope net("net"), fc("fc1");
    msg = message_of([&] { rt::matmul(a, b); });
  }
  CHECK(msg ==
        "matmul: shapes [64, 784] and [128, 10] cannot be multiplied: dimension 1 of the first operand (784) != "
        "dimension 0 of the second (128) (in module 'net.fc1').");
  CHECK_THROWS_AS(rt::matmul(a, b), rt::ShapeError);
  CHECK(message_of([&] { rt::mm(a, rt::zeros({10, 784})); }) ==
        "mm: shapes [64, 784] and [10, 784] cannot be multiplied: dimension 1 of the first operand (784) != "
        "dimension 0 of the second (10). Hint: did you mean to transpose the second operand?");
  CHECK_THAT(message_of([&] { rt::matmul(rt::zeros({5, 3}), rt::zeros({5, 2})); }),
             Catch::Contains("dimension 1 of the first operand (3) != dimension 0 of the second (5)") &&
                 Catch::Contains("transpose the first operand"));
  CHECK_THAT(message_of([&] { rt::matmul(rt::zeros({2, 3, 4}), rt::zeros({2, 5, 6})); }),
             Catch::Contains("[2, 3, 4] and [2, 5, 6]") && Catch::Contains("dimension 2 of the first operand (4)") &&
                 Catch::Contains("dimension 1 of the second (5)"));
  CHECK_THAT(message_of([&] { rt::matmul(rt::zeros({2, 3, 4}), rt::zeros({3, 4, 5})); }),
             Catch::Contains("matmul: batch dimensions") && Catch::Contains("2 vs 3"));
  CHECK_THAT(message_of([&] { rt::matmul(rt::zeros({}), rt::zeros({3})); }), Catch::Contains("at least 1-D"));
  CHECK_THAT(message_of([&] { rt::matmul(rt::zeros({3}), rt::zeros({4})); }),
             Catch::Contains("shapes [3] and [4]") && Catch::Contains("(3) != dimension 0 of the second (4)"));
  CHECK_THAT(message_of([&] { rt::mm(rt::zeros({2, 3, 4}), rt::zeros({4, 2})); }),
             Catch::Contains("mm: expected the first operand to be 2-D") && Catch::Contains("[2, 3, 4]"));
  CHECK_THAT(message_of([&] { rt::bmm(rt::zeros({2, 3, 4}), rt::zeros({3, 4, 5})); }),
             Catch::Contains("bmm: batch sizes") && Catch::Contains("2 vs 3") && Catch::Contains("matmul()"));
  CHECK_THAT(message_of([&] { rt::addmm(rt::zeros({3}), rt::zeros({2, 4}), rt::zeros({4, 5})); }),
             Catch::Contains("addmm: input (self) of shape [3]") && Catch::Contains("[2, 5]"));
  CHECK_THAT(message_of([&] { rt::linear(rt::zeros({8, 784}), rt::zeros({784, 10})); }),
             Catch::Contains("linear: input [8, 784] and weight [784, 10]") &&
                 Catch::Contains("dimension 1 of the input (784) != dimension 1 of the weight (10)") &&
                 Catch::Contains("weight looks transposed") && Catch::Contains("[10, 784]"));
  CHECK_THAT(message_of([&] { rt::linear(rt::zeros({8, 5}), rt::zeros({3, 5}), rt::zeros({4})); }),
             Catch::Contains("linear: bias of shape [4]") && Catch::Contains("[3]"));
  CHECK_THAT(message_of([&] { rt::linear(rt::zeros({8, 5}), rt::zeros({5})); }),
             Catch::Contains("linear: expected weight to be 2-D"));
}

TEST_CASE("linalg: a pending cancel stops a batched product") {
  Tensor x = rt::zeros({8, 4, 4}), y = rt::zeros({8, 4, 4});
  rt::request_cancel();
  CHECK_THROWS_AS(rt::bmm(x, y), rt::InterruptedError);
  rt::clear_cancel();
  CHECK(rt::bmm(x, y).sizes() == Shape{8, 4, 4});
}
