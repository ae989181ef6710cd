// composed: the GPU paths of ops that have no kernel of their own, written with ops that do.
//
//   if (!t.is_cpu()) {
//     Tensor out = detail::composed::logsumexp(t, plan.dims, keepdim);
//     ...record LogsumexpBackward0, whose closure calls composed::logsumexp_backward
//   }
//
// Every function here is device-agnostic: on a GPU each op it calls launches its own kernel; on
// the CPU the same code runs through the CPU kernels, which is how
// tests/engine/test_composed_ops.cpp checks each one against the CPU's direct implementation of
// the same op on a machine without a GPU. Forward functions run without recording autograd (the
// calling op records its own node, so a graph has the same node names on every device); backward
// functions are called from inside those nodes.
//
// Where the results differ from the CPU's in the last bits: these compute in the input's dtype op
// by op (the CPU kernels accumulate a row in double or float), and prod's backward divides the
// product by each element where the CPU multiplies prefix and suffix products.
#pragma once
#include <cstdint>
#include <optional>

#include "rt/export.h"
#include "rt/tensor.h"

// Exported from rt_engine (rt/export.h): tests/engine/test_composed_ops.cpp compares them with the CPU ops.
RT_API_BEGIN

namespace rt::detail::composed {

// var/std backward: grad of x given g and the result, both with the reduced dims kept (size 1).
// dims: wrapped, sorted (cpu::ReducePlan::dims); n: elements per result.
Tensor var_std_backward(const Tensor& x, const Tensor& g, const Tensor& result, const Shape& dims, int64_t n,
                        int64_t correction, bool take_sqrt);

// Vector p-norm over dims (keepdim as given; any p but NaN, inf and -inf included), and its
// backward given g and the result with the reduced dims kept: PyTorch's norm_backward, ties of
// the inf-norm sharing the gradient, a zero norm passing none.
Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim);
Tensor norm_backward(const Tensor& x, const Tensor& g, const Tensor& result, double p, const Shape& dims);

// prod backward (over one dim, or all when dim is empty), exact where x holds zeros: a row with
// one zero passes the product of the others to it and 0 elsewhere; two or more zeros give 0.
Tensor prod_backward(const Tensor& x, const Tensor& g, const Tensor& result, std::optional<int64_t> dim);

// log(sum(exp(x))) over dims (a reduction of at least one element per result), each row shifted
// by its max (by 0 where the max is infinite), as the CPU does. And its backward g * exp(x - result),
// g and result with the reduced dims kept.
Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim);
Tensor logsumexp_backward(const Tensor& x, const Tensor& g, const Tensor& result);

// Elementwise losses before reduction, and their gradients given gs, the incoming gradient
// already scaled per element (1/numel for 'mean').
Tensor mse_elementwise(const Tensor& x, const Tensor& t);
Tensor mse_backward(const Tensor& x, const Tensor& t, const Tensor& gs);  // d/dx; d/dt is its negation
// w * ((1 - t) x - (1 + (pw - 1) t) log_sigmoid(x)), and the gradients of x, t, w, pw (those with
// need[i] set; the others undefined), each in the input's shape.
Tensor bce_with_logits_elementwise(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw);
TensorList bce_with_logits_backward(const Tensor& x, const Tensor& t, const Tensor& w, const Tensor& pw,
                                    const Tensor& gs, const bool need[4]);
// 'mean' / 'sum' of an elementwise loss, or the loss itself for 'none' (mean = false, sum = false).
Tensor reduce_loss(const Tensor& el, bool mean, bool sum);

// maximum/minimum backward for operand x against y: g where x wins, g/2 on ties, 0 where it loses.
Tensor extremum_backward(bool is_max, const Tensor& g, const Tensor& x, const Tensor& y);

// pow(x, y) backward: g * y * x^(y-1) (0 where y == 0), and g * x^y * log(x) (0 where x == 0 and
// y >= 0), in dtype dt. x may be a 0-dim CPU tensor (a Python number base).
Tensor pow_base_backward(const Tensor& g, const Tensor& x, const Tensor& y, ScalarType dt);
Tensor pow_exponent_backward(const Tensor& g, const Tensor& x, const Tensor& y, ScalarType dt);

}  // namespace rt::detail::composed

RT_API_END
