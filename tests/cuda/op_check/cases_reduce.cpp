// Reductions over various dims (keepdim both): sum, mean, amax/amin, max/min, argmax/argmin,
// norm (p = 0, 0.5, 1, 2, 3, inf, -inf), var/std, logsumexp, prod, all/any; integer and bool sums; sizes larger than one block.
#include <cmath>

#include "cases.h"

namespace rt::op_check {
namespace {

const std::vector<Shape> kDims = {{}, {0}, {1}, {-1}, {0, 2}, {1, 2}};

std::string dims_text(const Shape& d, bool keepdim) {
  return "dims=" + (d.empty() ? std::string("all") : format_shape(d)) + (keepdim ? " keepdim" : "");
}

}  // namespace

void add_reduce_cases(OpCheck& check) {
  for (const Shape& dims : kDims)
    for (bool keepdim : {false, true}) {
      const std::string v = dims_text(dims, keepdim);
      for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
        check.run({.op = "sum", .variant = v, .inputs = {randn_t({4, 5, 6}, dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::sum(in[0], dims, keepdim); })});
        check.run({.op = "mean", .variant = v, .inputs = {randn_t({4, 5, 6}, dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::mean(in[0], dims, keepdim); })});
      }
      // Ties (small integers) make amax/amin split the gradient evenly; both devices must agree.
      for (ScalarType dt : kFloatTypes) {
        check.run({.op = "amax", .variant = v, .inputs = {randint_t(-4, 5, {4, 5, 6}).to(dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::amax(in[0], dims, keepdim); })});
        check.run({.op = "amin", .variant = v, .inputs = {randn_t({4, 5, 6}, dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::amin(in[0], dims, keepdim); })});
        for (double p : {1.0, 2.0})
          check.run({.op = "norm", .variant = "p=" + std::to_string(int(p)) + " " + v, .inputs = {randn_t({4, 5, 6}, dt)},
                     .grad = {true}, .tol = Tol::Reduction,
                     .fn = one([=](const TensorList& in, Device) { return rt::norm(in[0], p, dims, keepdim); })});
      }
      check.run({.op = "sum", .variant = "int64 " + v, .inputs = {randint_t(-100, 100, {4, 5, 6})}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::sum(in[0], dims, keepdim); })});
      check.run({.op = "sum", .variant = "int32 " + v, .inputs = {randint_t(-100, 100, {4, 5, 6}, kInt32)}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::sum(in[0], dims, keepdim); })});
      check.run({.op = "sum", .variant = "bool " + v, .inputs = {mask_t({4, 5, 6}, 0.5)}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::sum(in[0], dims, keepdim); })});
      check.run({.op = "amax", .variant = "int64 " + v, .inputs = {randint_t(-100, 100, {4, 5, 6})}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::amax(in[0], dims, keepdim); })});
      for (ScalarType dt : kFloatTypes) {
        check.run({.op = "var", .variant = v, .inputs = {randn_t({4, 5, 6}, dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::var(in[0], dims, 1, keepdim); })});
        check.run({.op = "std", .variant = v, .inputs = {randn_t({4, 5, 6}, dt)}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::std(in[0], dims, 1, keepdim); })});
        check.run({.op = "logsumexp", .variant = v, .inputs = {randn_t({4, 5, 6}, dt) * 4}, .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::logsumexp(in[0], dims, keepdim); })});
      }
      check.run({.op = "var", .variant = "correction=0 " + v, .inputs = {randn_t({4, 5, 6})}, .grad = {true}, .tol = Tol::Reduction,
                 .fn = one([=](const TensorList& in, Device) { return rt::var(in[0], dims, 0, keepdim); })});
    }
  for (bool keepdim : {false, true})
    for (std::optional<int64_t> d : {std::optional<int64_t>(), std::optional<int64_t>(0), std::optional<int64_t>(-1)}) {
      const std::string v = (d ? "dim=" + std::to_string(*d) : std::string("all")) + (keepdim ? " keepdim" : "");
      // Values near 1 keep the product in range; planted zeros (one per row of some rows, two in
      // others) exercise the exact gradient at zeros.
      for (ScalarType dt : kFloatTypes)
        check.run({.op = "prod", .variant = v, .inputs = {rt::masked_fill(uniform_t({6, 5}, 0.7, 1.3, dt), mask_t({6, 5}, 0.15), 0.0)},
                   .grad = {true}, .tol = Tol::Reduction,
                   .fn = one([=](const TensorList& in, Device) { return rt::prod(in[0], d, keepdim); })});
      check.run({.op = "prod", .variant = "int64 " + v, .inputs = {randint_t(-3, 4, {6, 5})}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::prod(in[0], d, keepdim); })});
      check.run({.op = "all", .variant = v, .inputs = {mask_t({6, 5}, 0.9)}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::all(in[0], d, keepdim); })});
      check.run({.op = "any", .variant = v, .inputs = {mask_t({6, 5}, 0.1)}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) { return rt::any(in[0], d, keepdim); })});
      check.run({.op = "any", .variant = "float32 with NaN " + v, .inputs = {randint_t(0, 2, {6, 5}).to(kFloat32)}, .tol = Tol::Exact,
                 .fn = one([=](const TensorList& in, Device) {
                   return rt::any(rt::where(in[0].gt(scalar_to_tensor(0.5)), in[0], scalar_to_tensor(0.0)) / in[0], d, keepdim);
                 })});
    }
  check.run({.op = "logsumexp", .variant = "rows of -inf and +inf", .inputs = {randn_t({4, 6})}, .grad = {false}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) {
               const Tensor ninf = rt::where(in[0].gt(scalar_to_tensor(-10.0)), scalar_to_tensor(-INFINITY), in[0]);
               return rt::logsumexp(rt::cat({ninf, in[0], rt::clamp(in[0], std::nullopt, 1.0) * scalar_to_tensor(INFINITY)}, 0), {1});
             })});
  check.run({.op = "var", .variant = "large dims=[-1]", .inputs = {randn_t({40, 5000}) + 3}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::var(in[0], {-1}); })});
  for (bool keepdim : {false, true})
    for (int64_t d : {0, 1, -1})
      for (ScalarType dt : {kFloat32, kFloat16, kBFloat16, kInt64}) {
        // Ties: both devices must pick the first index of the extreme, as the CPU does.
        const std::string v = "dim=" + std::to_string(d) + (keepdim ? " keepdim" : "");
        check.run({.op = "argmax", .variant = v, .inputs = {randint_t(-3, 4, {5, 7, 3}).to(dt)}, .tol = Tol::Exact,
                   .fn = one([=](const TensorList& in, Device) { return rt::argmax(in[0], d, keepdim); })});
        check.run({.op = "argmin", .variant = v, .inputs = {randn_t({5, 7, 3}).to(dt)}, .tol = Tol::Exact,
                   .fn = one([=](const TensorList& in, Device) { return rt::argmin(in[0], d, keepdim); })});
        // max/min along a dim: values (with the gradient routed to the chosen index) and indices.
        const bool floating = dt != kInt64;
        check.run({.op = "max", .variant = v + " values+indices", .inputs = {randint_t(-3, 4, {5, 7, 3}).to(dt)}, .grad = {floating},
                   .tol = Tol::Exact, .fn = [=](const TensorList& in, Device) {
                     auto [values, indices] = rt::max(in[0], d, keepdim);
                     return TensorList{values, indices};
                   }});
        check.run({.op = "min", .variant = v + " values+indices", .inputs = {randn_t({5, 7, 3}).to(dt)}, .grad = {floating},
                   .tol = Tol::Exact, .fn = [=](const TensorList& in, Device) {
                     auto [values, indices] = rt::min(in[0], d, keepdim);
                     return TensorList{values, indices};
                   }});
      }
  check.run({.op = "argmax", .variant = "all", .inputs = {randn_t({33, 17})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::argmax(in[0]); })});
  check.run({.op = "argmin", .variant = "all keepdim", .inputs = {randn_t({33, 17})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::argmin(in[0], std::nullopt, true); })});
  for (ScalarType dt : kFloatTypes) {
    check.run({.op = "max", .variant = "all", .inputs = {randn_t({33, 17}, dt)}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::max(in[0]); })});
    check.run({.op = "min", .variant = "all", .inputs = {randn_t({33, 17}, dt)}, .grad = {true}, .tol = Tol::Reduction,
               .fn = one([](const TensorList& in, Device) { return rt::min(in[0]); })});
  }
  // Bigger than one block, and reductions over strided (transposed) inputs.
  check.run({.op = "sum", .variant = "large all", .inputs = {randn_t({300, 1001})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::sum(in[0]); })});
  check.run({.op = "sum", .variant = "large dims=[0]", .inputs = {randn_t({1025, 130})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::sum(in[0], {0}); })});
  // Long enough to split across blocks (a second pass merges the partial results): columns, rows, Welford, arg.
  for (ScalarType dt : {kFloat32, kFloat16})
    check.run({.op = "sum", .variant = "split columns dims=[0] " + std::string(dtype_name(dt)), .inputs = {randn_t({4096, 64}, dt)},
               .grad = {true}, .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::sum(in[0], {0}); })});
  check.run({.op = "var", .variant = "split rows dims=[-1]", .inputs = {randn_t({2, 20000}) + 3}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::var(in[0], {-1}); })});
  check.run({.op = "argmax", .variant = "split rows dim=1", .inputs = {randn_t({3, 50000})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::argmax(in[0], 1); })});
  check.run({.op = "max", .variant = "split rows values+indices", .inputs = {randn_t({3, 50000}, kBFloat16)}, .grad = {true},
             .tol = Tol::Reduction, .fn = [](const TensorList& in, Device) {
               auto [values, indices] = rt::max(in[0], 1);
               return TensorList{values, indices};
             }});
  // Empty tensors: a zero-sized inner dim is contiguous (its strides are arbitrary), and a 0-dim
  // tensor reduces along its dim 0.
  check.run({.op = "sum", .variant = "empty inner dim [2, 0, 3] dims=[-1]", .inputs = {randn_t({2, 0, 3})}, .tol = Tol::Exact,
             .fn = one([](const TensorList& in, Device) { return rt::sum(in[0], {-1}); })});
  check.run({.op = "max", .variant = "0-dim along dim 0", .inputs = {randn_t({})}, .grad = {true}, .tol = Tol::Exact,
             .fn = [](const TensorList& in, Device) {
               auto [values, indices] = rt::max(in[0], 0);
               return TensorList{values, indices};
             }});
  check.run({.op = "mean", .variant = "large dims=[-1] float16", .inputs = {randn_t({70, 5000}, kFloat16)}, .grad = {true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::mean(in[0], {-1}); })});
  check.run({.op = "sum", .variant = "transposed dims=[1]", .inputs = {randn_t({40, 30})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::sum(in[0].t(), {1}); })});
  check.run({.op = "amax", .variant = "transposed dims=[0]", .inputs = {randn_t({40, 30})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::amax(in[0].t(), {0}); })});
  // Other orders, ties of the inf-norm (small integers) and a zero row (no gradient through a zero norm).
  for (double p : {0.0, 0.5, 3.0, double(INFINITY), -double(INFINITY)})
    for (ScalarType dt : {kFloat32, kFloat16})
      check.run({.op = "norm", .variant = "p=" + std::to_string(p).substr(0, 4) + " dims=[1]",
                 .inputs = {rt::cat({randint_t(-3, 4, {5, 6}).to(dt), rt::zeros({1, 6}, dt)}, 0)}, .grad = {true},
                 .tol = Tol::Reduction, .fn = one([p](const TensorList& in, Device) { return rt::norm(in[0], p, {1}); })});
  check.run({.op = "norm", .variant = "p=2 zero row", .inputs = {rt::cat({randn_t({3, 4}), rt::zeros({1, 4})}, 0)}, .grad = {true},
             .tol = Tol::Reduction, .fn = one([](const TensorList& in, Device) { return rt::norm(in[0], 2, {1}); })});
  check.run({.op = "norm", .variant = "p=2 large", .inputs = {randn_t({513, 257})}, .grad = {true}, .tol = Tol::Reduction,
             .fn = one([](const TensorList& in, Device) { return rt::norm(in[0]); })});
}

}  // namespace rt::op_check
