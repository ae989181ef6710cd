// Elementwise math and activations, forward and backward, in every floating dtype; a few integer
// forms; non-contiguous inputs; sizes that leave a tail after the vectorised fast path.
#include <string>

#include "cases.h"

namespace rt::op_check {
namespace {

struct Unary {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  double lo, hi;  // input range: inside the function's domain, away from kinks where it matters
};

const std::vector<Unary>& unaries() {
  static const std::vector<Unary> u = {
      {"neg", [](const Tensor& x) { return rt::neg(x); }, -3, 3},
      {"abs", [](const Tensor& x) { return rt::abs(x); }, -3, 3},
      {"sign", [](const Tensor& x) { return rt::sign(x); }, -3, 3},
      {"exp", [](const Tensor& x) { return rt::exp(x); }, -4, 4},
      {"log", [](const Tensor& x) { return rt::log(x); }, 0.1, 5},
      {"log1p", [](const Tensor& x) { return rt::log1p(x); }, -0.5, 3},
      {"sqrt", [](const Tensor& x) { return rt::sqrt(x); }, 0.1, 5},
      {"rsqrt", [](const Tensor& x) { return rt::rsqrt(x); }, 0.2, 5},
      {"reciprocal", [](const Tensor& x) { return rt::reciprocal(x); }, 0.5, 3},
      {"sin", [](const Tensor& x) { return rt::sin(x); }, -4, 4},
      {"cos", [](const Tensor& x) { return rt::cos(x); }, -4, 4},
      {"tanh", [](const Tensor& x) { return rt::tanh(x); }, -3, 3},
      {"sigmoid", [](const Tensor& x) { return rt::sigmoid(x); }, -6, 6},
      {"relu", [](const Tensor& x) { return rt::relu(x); }, -3, 3},
      {"leaky_relu", [](const Tensor& x) { return rt::leaky_relu(x, 0.2); }, -3, 3},
      {"gelu", [](const Tensor& x) { return rt::gelu(x); }, -4, 4},
      {"gelu(tanh)", [](const Tensor& x) { return rt::gelu(x, "tanh"); }, -4, 4},
      {"silu", [](const Tensor& x) { return rt::silu(x); }, -5, 5},
      {"softplus", [](const Tensor& x) { return rt::softplus(x); }, -5, 5},
      {"softplus(beta=2,threshold=5)", [](const Tensor& x) { return rt::softplus(x, 2.0, 5.0); }, -5, 5},
  };
  return u;
}

}  // namespace

void add_unary_cases(OpCheck& check) {
  for (const Unary& u : unaries()) {
    for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64})
      check.run({.op = u.name, .inputs = {uniform_t({6, 33}, u.lo, u.hi, dt)}, .grad = {true},
                 .fn = one([f = u.fn](const TensorList& in, Device) { return f(in[0]); })});
    // Large enough for the vectorised path plus a ragged tail, and a transposed (strided) input.
    check.run({.op = u.name, .variant = "4099 elements", .inputs = {uniform_t({4099}, u.lo, u.hi)}, .grad = {true},
               .fn = one([f = u.fn](const TensorList& in, Device) { return f(in[0]); })});
    check.run({.op = u.name, .variant = "transposed", .inputs = {uniform_t({9, 17}, u.lo, u.hi)}, .grad = {true},
               .fn = one([f = u.fn](const TensorList& in, Device) { return f(in[0].t()); })});
  }
  // Integer inputs: same-dtype ops stay integer, floating-only ones promote to float32.
  for (const char* name : {"neg", "abs", "sign", "relu", "exp", "sqrt", "sigmoid"}) {
    for (const Unary& u : unaries())
      if (u.name == std::string(name))
        check.run({.op = u.name, .variant = "int64", .inputs = {randint_t(0, 9, {5, 4})}, .tol = Tol::Pointwise,
                   .fn = one([f = u.fn](const TensorList& in, Device) { return f(in[0]); })});
  }
  // NaN where the CPU has it: log and sqrt of negatives, forward and backward.
  check.run({.op = "log", .variant = "negative inputs (NaN)", .inputs = {uniform_t({40}, -1, 1)}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::log(in[0]); })});
  check.run({.op = "sqrt", .variant = "negative inputs (NaN)", .inputs = {uniform_t({40}, -1, 1)}, .grad = {true},
             .fn = one([](const TensorList& in, Device) { return rt::sqrt(in[0]); })});
  check.run({.op = "exp", .variant = "overflow to inf", .inputs = {uniform_t({40}, 80, 100)},
             .fn = one([](const TensorList& in, Device) { return rt::exp(in[0]); })});
  // In-place activations on a tensor that needs no grad.
  check.run({.op = "relu_", .inputs = {randn_t({8, 8})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { Tensor x = in[0]; return x.relu_(); })});
  check.run({.op = "sigmoid_", .inputs = {randn_t({8, 8}, kFloat16)},
             .fn = one([](const TensorList& in, Device) { Tensor x = in[0]; return x.sigmoid_(); })});
}

}  // namespace rt::op_check
