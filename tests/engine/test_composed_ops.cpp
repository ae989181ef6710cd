// The composed GPU paths of engine/src/ops/composed.h, run on the CPU and compared with the CPU's
// own kernels for the same ops: forward values and the gradients autograd computes. On a GPU the
// same code launches the CUDA kernels of the ops it calls (rt_cuda_op_check compares those runs
// with the CPU), so a wrong formula shows here, on a machine without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "ops/composed.h"
#include "cpu/reduce.h"
#include "testing.h"

using rt::Shape;
using rt::Tensor;
using rt::TensorList;
using rt::testing::random;
using rt::testing::require_close;
namespace composed = rt::detail::composed;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// x[pos...] = v, in place.
void set(const Tensor& x, std::initializer_list<int64_t> pos, double v) {
  Tensor e = x;
  for (int64_t i : pos) e = e.select(0, i);
  e.fill_(v);
}

// x as a fresh leaf that requires grad.
Tensor leaf(const Tensor& x) { return x.detach().clone().requires_grad_(true); }

// The gradient autograd gives x for sum(f(x) * w).
Tensor grad_of(const Tensor& x, const Tensor& out, const Tensor& w) {
  (out * w).sum().backward();
  return x.grad();
}

}  // namespace

TEST_CASE("var/std backward equals the CPU's, zero spread included", "[composed]") {
  Tensor x = random({4, 5, 6}, rt::kFloat64, -2, 2, 1);
  x.select(0, 1).select(0, 2).fill_(0.75);  // a row of equal values: std 0, no gradient
  for (const Shape& dims : {Shape{}, Shape{2}, Shape{0, 2}})
    for (int64_t correction : {0, 1})
      for (bool take_sqrt : {false, true}) {
        INFO("dims " << rt::format_shape(dims) << " correction " << correction << (take_sqrt ? " std" : " var"));
        Tensor a = leaf(x);
        Tensor out = take_sqrt ? rt::std(a, dims, correction, /*keepdim=*/true) : rt::var(a, dims, correction, true);
        const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 2);
        const Tensor expected = grad_of(a, out, w);
        const auto plan = rt::cpu::ReducePlan::describe(x.sizes(), dims, true, "var");
        require_close(composed::var_std_backward(x, w, out.detach(), plan.dims, plan.inner, correction, take_sqrt),
                      expected, 1e-10, 1e-12);
      }
}

TEST_CASE("norm of any order and its gradient equal the CPU's, with ties, zeros and a zero row", "[composed]") {
  Tensor x = rt::cat({rt::testing::random_int({4, 5}, -3, 4, 30).to(rt::kFloat64), rt::zeros({1, 5}, rt::kFloat64)}, 0);
  set(x, {0, 0}, 0.25);
  for (double p : {0.0, 0.5, 1.0, 2.0, 3.0, 1.5, kInf, -kInf})
    for (const Shape& dims : {Shape{1}, Shape{}}) {
      INFO("p " << p << " dims " << rt::format_shape(dims));
      Tensor a = leaf(x);
      Tensor out = rt::norm(a, p, dims, /*keepdim=*/true);
      require_close(composed::norm(x, p, dims.empty() ? Shape{0, 1} : dims, true), out.detach(), 1e-12);
      const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 31);
      require_close(composed::norm_backward(x, w, out.detach(), p, dims.empty() ? Shape{0, 1} : dims), grad_of(a, out, w),
                    1e-12, 1e-14);
    }
  require_close(composed::norm(x, 2, {1}, false), rt::norm(x, 2, {1}), 1e-12);
}

TEST_CASE("prod backward equals the CPU's with no, one and two zeros in a row", "[composed]") {
  Tensor x = random({3, 5}, rt::kFloat64, 0.5, 1.5, 3);
  set(x, {1, 2}, 0.0);                       // row 1: one zero
  set(x, {2, 0}, 0.0), set(x, {2, 4}, 0.0);  // row 2: two zeros
  for (std::optional<int64_t> dim : {std::optional<int64_t>(1), std::optional<int64_t>(0), std::optional<int64_t>()}) {
    INFO("dim " << (dim ? std::to_string(*dim) : "all"));
    Tensor a = leaf(x);
    Tensor out = dim ? rt::prod(a, *dim, /*keepdim=*/true) : rt::prod(a);
    const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 4);
    require_close(composed::prod_backward(x, w, out.detach(), dim), grad_of(a, out, w), 1e-12, 1e-14);
  }
  Tensor one_zero = random({6}, rt::kFloat64, 0.5, 1.5, 5);
  set(one_zero, {3}, 0.0);
  Tensor a = leaf(one_zero);
  Tensor out = rt::prod(a);
  require_close(composed::prod_backward(one_zero, rt::ones({}, rt::kFloat64), out.detach(), std::nullopt),
                grad_of(a, out, rt::ones({}, rt::kFloat64)), 1e-12, 1e-14);
}

TEST_CASE("logsumexp equals the CPU's, rows of -inf, +inf and NaN included, and so does its gradient", "[composed]") {
  Tensor x = random({4, 7}, rt::kFloat64, -30, 30, 6);
  x.select(0, 1).fill_(-kInf);
  set(x, {2, 3}, kInf);
  set(x, {3, 0}, kNaN);
  for (bool keepdim : {false, true}) {
    require_close(composed::logsumexp(x, {1}, keepdim), rt::logsumexp(x, {1}, keepdim), 1e-12);
    require_close(composed::logsumexp(x, {0, 1}, keepdim), rt::logsumexp(x, {0, 1}, keepdim), 1e-12);
  }
  const Tensor finite = random({3, 5, 2}, rt::kFloat32, -4, 4, 7);
  require_close(composed::logsumexp(finite, {1}, false), rt::logsumexp(finite, {1}), 1e-6);
  Tensor a = leaf(random({3, 5}, rt::kFloat64, -3, 3, 8));
  Tensor out = rt::logsumexp(a, {1}, true);
  const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 9);
  require_close(composed::logsumexp_backward(a.detach(), w, out.detach()), grad_of(a, out, w), 1e-12);
}

TEST_CASE("mse_loss: elementwise loss, reductions and gradients equal the CPU's, broadcasting included", "[composed]") {
  const Tensor x = random({4, 6}, rt::kFloat64, -2, 2, 10), t = random({6}, rt::kFloat64, -2, 2, 11);
  for (const char* reduction : {"mean", "sum", "none"}) {
    INFO("reduction " << reduction);
    const bool mean = std::string(reduction) == "mean", sum = std::string(reduction) == "sum";
    Tensor a = leaf(x), b = leaf(t);
    Tensor out = rt::mse_loss(a, b, reduction);
    require_close(composed::reduce_loss(composed::mse_elementwise(x, t), mean, sum), out, 1e-12);
    const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 12);
    (out * w).sum().backward();
    const Tensor gs = mean ? w * (1.0 / 24.0) : w;
    const Tensor gx = composed::mse_backward(x, t, gs);
    require_close(gx, a.grad(), 1e-12);
    require_close(rt::autograd::sum_to(rt::neg(gx), t.sizes()), b.grad(), 1e-12);
  }
}

TEST_CASE("binary_cross_entropy_with_logits: loss and all four gradients equal the CPU's", "[composed]") {
  const Tensor x = random({3, 5}, rt::kFloat64, -40, 40, 13);  // large |x|: the stable log_sigmoid matters
  const Tensor t = random({3, 5}, rt::kFloat64, 0, 1, 14);
  const Tensor w = random({5}, rt::kFloat64, 0.2, 2, 15), pw = random({5}, rt::kFloat64, 0.5, 3, 16);
  Tensor a = leaf(x), b = leaf(t), c = leaf(w), d = leaf(pw);
  Tensor out = rt::binary_cross_entropy_with_logits(a, b, c, "sum", d);
  require_close(composed::reduce_loss(composed::bce_with_logits_elementwise(x, t, w, pw), false, true), out, 1e-12);
  const Tensor g = random({}, rt::kFloat64, 0.5, 1.5, 17);
  (out * g).backward();
  const bool need[4] = {true, true, true, true};
  const TensorList grads = composed::bce_with_logits_backward(x, t, w, pw, g, need);
  require_close(grads[0], a.grad(), 1e-10, 1e-12);
  require_close(grads[1], b.grad(), 1e-10, 1e-12);
  require_close(rt::autograd::sum_to(grads[2], w.sizes()), c.grad(), 1e-10, 1e-12);
  require_close(rt::autograd::sum_to(grads[3], pw.sizes()), d.grad(), 1e-10, 1e-12);
  const bool only_input[4] = {true, false, false, false};
  const TensorList some = composed::bce_with_logits_backward(x, t, w, pw, g, only_input);
  CHECK(some[0].defined());
  CHECK_FALSE(some[1].defined());
}

TEST_CASE("maximum/minimum backward: winners get the gradient, ties half, losers none, NaN the whole", "[composed]") {
  Tensor x = rt::testing::random_int({4, 6}, -2, 3, 18).to(rt::kFloat64);
  Tensor y = rt::testing::random_int({6}, -2, 3, 19).to(rt::kFloat64);
  set(x, {0, 0}, kNaN);
  for (bool is_max : {true, false}) {
    Tensor a = leaf(x), b = leaf(y);
    Tensor out = is_max ? rt::maximum(a, b) : rt::minimum(a, b);
    const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 20);
    (out * w).sum().backward();
    require_close(composed::extremum_backward(is_max, w, x, y), a.grad(), 1e-14);
    require_close(rt::autograd::sum_to(composed::extremum_backward(is_max, w, y, x), y.sizes()), b.grad(), 1e-14);
  }
}

TEST_CASE("pow(tensor, tensor) backward of base and exponent equals the CPU's, zero bases included", "[composed]") {
  Tensor x = random({3, 4}, rt::kFloat64, 0.2, 3, 21), y = random({4}, rt::kFloat64, -2, 2, 22);
  set(x, {1, 1}, 0.0);
  set(y, {2}, 0.0);
  Tensor a = leaf(x), b = leaf(y);
  Tensor out = rt::pow(a, b);
  const Tensor w = random(out.sizes(), rt::kFloat64, -1, 1, 23);
  (out * w).sum().backward();
  require_close(composed::pow_base_backward(w, x, y, rt::kFloat64), a.grad(), 1e-12);
  require_close(rt::autograd::sum_to(composed::pow_exponent_backward(w, x, y, rt::kFloat64), y.sizes()), b.grad(), 1e-12);
  // A Python-number base: pow(2, y).
  Tensor e = leaf(y);
  Tensor p = rt::pow(rt::Scalar(2.0), e);
  const Tensor v = random(p.sizes(), rt::kFloat64, -1, 1, 24);
  (p * v).sum().backward();
  require_close(composed::pow_exponent_backward(v, rt::scalar_to_tensor(2.0), y, rt::kFloat64), e.grad(), 1e-12);
}
