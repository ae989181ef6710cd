// matmul, mm, bmm, addmm, linear: shape checks here, products through dispatch::matmul: on the CPU
// cpu_matmul.cpp (OpenBLAS), on a GPU cuBLAS (engine/src/cuda/ops_nn.cpp).
#include "../amp/autocast_policy.h"
#include "cpu/gemm.h"
#include "ops/column_sums.h"
#include "ops/cpu_view.h"
#include "dispatch_stubs.h"
#include "linear_parts.h"
#include "device_copy.h"
#include "op_device.h"
#include "reduce_cuda.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/elementwise.h"
#include "rt/ops/linalg.h"
#include "rt/ops/view.h"

namespace rt {
using autograd::record;
using autograd::SavedTensor;

namespace {

std::string dtype_str(const Tensor& t) { return std::string(dtype_name(t.dtype())); }

void check_dtypes(const char* op, const TensorList& ts, const char* const* names) {
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].defined()) continue;
    if (ts[i].dtype() == kBool)
      throw DTypeError(std::string(op) + ": dtype bool is not supported (" + names[i] + " " +
                       format_shape(ts[i].sizes()) + ")" + module_context());
    if (ts[i].dtype() != ts[0].dtype())
      throw DTypeError(std::string(op) + ": expected all operands to have the same dtype, but the " + names[0] + " " +
                       format_shape(ts[0].sizes()) + " is " + dtype_str(ts[0]) + " and the " + names[i] + " " +
                       format_shape(ts[i].sizes()) + " is " + dtype_str(ts[i]) + module_context() +
                       ". Hint: convert one of them with .to(rt::k" +
                       (ts[0].dtype() == kFloat64 ? "Float64" : "Float32") + ")");
  }
}

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  static const char* const names[] = {"first operand", "second operand"};
  check_dtypes(op, {a, b}, names);
  detail::op_device(op, a, b);
}

void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha = 1.0, double beta = 0.0) {
  dispatch::matmul(out.device(), out, a, b, alpha, beta);
}

// Throws the "cannot be multiplied" error for contracted dims da (of a) and db (of b).
[[noreturn]] void throw_mismatch(const char* op, const Tensor& a, const Tensor& b, int64_t da, int64_t db) {
  const int64_t ka = a.size(da), kb = b.size(db);
  std::string hint;
  if (b.dim() >= 2 && ka == b.size(-1)) hint = "did you mean to transpose the second operand?";
  else if (a.dim() >= 2 && a.size(-2) == kb) hint = "did you mean to transpose the first operand?";
  throw_shape_error(op, "shapes " + format_shape(a.sizes()) + " and " + format_shape(b.sizes()) +
                            " cannot be multiplied: dimension " + std::to_string(da) + " of the first operand (" +
                            std::to_string(ka) + ") != dimension " + std::to_string(db) + " of the second (" +
                            std::to_string(kb) + ")",
                    hint);
}

void check_matrix(const char* op, const Tensor& t, int64_t want, const char* which) {
  if (t.dim() != want)
    throw_shape_error(op, "expected the " + std::string(which) + " to be " + std::to_string(want) + "-D, but got " +
                              std::to_string(t.dim()) + "-D with shape " + format_shape(t.sizes()),
                      want == 2 ? "use matmul() for other ranks" : "use matmul() for broadcasting batch dims");
}

// A view for the kernel only: no autograd, no observers.
Tensor alias(const Tensor& t, Shape sizes, Shape strides) { return make_view(t, std::move(sizes), std::move(strides), t.storage_offset()); }
Tensor as_row(const Tensor& v) { return alias(v, {1, v.size(0)}, {v.size(0) * v.stride(0), v.stride(0)}); }
Tensor as_col(const Tensor& v) { return alias(v, {v.size(0), 1}, {v.stride(0), 1}); }
Tensor transposed(const Tensor& t) {
  const int64_t nd = t.dim();
  Shape sz = t.sizes(), st = t.strides();
  std::swap(sz[size_t(nd - 1)], sz[size_t(nd - 2)]);
  std::swap(st[size_t(nd - 1)], st[size_t(nd - 2)]);
  return alias(t, sz, st);
}

Tensor scaled(const Tensor& g, double s) { return s == 1.0 ? g : g * Scalar(s); }

Tensor dot_core(const Tensor& a, const Tensor& b) {
  OpGuard guard("dot", a, b);
  Tensor out = make_tensor({}, a.dtype(), a.device());
  matmul_into(alias(out, {1, 1}, {1, 1}), as_row(a), as_col(b));
  if (autograd::any_requires_grad(a, b))
    record("DotBackward0", {a, b}, {out}, [sa = SavedTensor(a), sb = SavedTensor(b)](const TensorList& g) {
      return TensorList{g[0] * sb.unpack(), g[0] * sa.unpack()};
    });
  return out;
}

Tensor mv_core(const Tensor& a, const Tensor& v) {
  OpGuard guard("mv", a, v);
  Tensor out = make_tensor({a.size(0)}, a.dtype(), a.device());
  matmul_into(as_col(out), a, as_col(v));
  if (autograd::any_requires_grad(a, v)) {
    const bool ga = a.requires_grad(), gv = v.requires_grad();
    record("MvBackward0", {a, v}, {out},
           [sa = gv ? SavedTensor(a) : SavedTensor(), sv = ga ? SavedTensor(v) : SavedTensor(), ga, gv](const TensorList& g) {
             return TensorList{ga ? unsqueeze(g[0], 1) * sv.unpack() : Tensor(), gv ? mv_core(transpose(sa.unpack(), 0, 1), g[0]) : Tensor()};
           });
  }
  return out;
}

Tensor mm_core(const Tensor& a, const Tensor& b) {
  Tensor out = make_tensor({a.size(0), b.size(1)}, a.dtype(), a.device());
  matmul_into(out, a, b);
  if (autograd::any_requires_grad(a, b)) {
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    record("MmBackward0", {a, b}, {out},
           [sa = gb ? SavedTensor(a) : SavedTensor(), sb = ga ? SavedTensor(b) : SavedTensor(), ga, gb](const TensorList& g) {
             return TensorList{ga ? mm(g[0], sb.unpack().t()) : Tensor(), gb ? mm(sa.unpack().t(), g[0]) : Tensor()};
           });
  }
  return out;
}

// a [..., m, k] @ b [..., k, n] with equal (possibly expanded) batch dims.
Tensor bmm_core(const Tensor& a, const Tensor& b) {
  Shape shape = a.sizes();
  shape.back() = b.size(-1);
  Tensor out = make_tensor(shape, a.dtype(), a.device());
  matmul_into(out, a, b);
  if (autograd::any_requires_grad(a, b)) {
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    record("BmmBackward0", {a, b}, {out},
           [sa = gb ? SavedTensor(a) : SavedTensor(), sb = ga ? SavedTensor(b) : SavedTensor(), ga, gb](const TensorList& g) {
             OpGuard guard("bmm", g[0]);
             return TensorList{ga ? bmm_core(g[0], transpose(sb.unpack(), -1, -2)) : Tensor(),
                               gb ? bmm_core(transpose(sa.unpack(), -1, -2), g[0]) : Tensor()};
           });
  }
  return out;
}

// Batch dims of a [..., m, k] and b [..., k, n] broadcast together.
Shape matmul_batch(const Tensor& a, const Tensor& b) {
  const Shape ba(a.sizes().begin(), a.sizes().end() - 2), bb(b.sizes().begin(), b.sizes().end() - 2);
  const size_t n = std::max(ba.size(), bb.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - ba.size() ? 1 : ba[i - (n - ba.size())];
    const int64_t y = i < n - bb.size() ? 1 : bb[i - (n - bb.size())];
    if (x != y && x != 1 && y != 1)
      throw_shape_error("matmul", "batch dimensions of shapes " + format_shape(a.sizes()) + " and " +
                                      format_shape(b.sizes()) + " cannot be broadcast: " + std::to_string(x) + " vs " +
                                      std::to_string(y) + " at batch dimension " + std::to_string(i),
                        "batch sizes must match or be 1");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Shape concat(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&a, &b}); ac) return mm(ac[0], ac[1]);
  OpGuard guard("mm", a, b);
  check_matrix("mm", a, 2, "first operand");
  check_matrix("mm", b, 2, "second operand");
  check_pair("mm", a, b);
  if (a.size(1) != b.size(0)) throw_mismatch("mm", a, b, 1, 0);
  return mm_core(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&a, &b}); ac) return bmm(ac[0], ac[1]);
  OpGuard guard("bmm", a, b);
  check_matrix("bmm", a, 3, "first operand");
  check_matrix("bmm", b, 3, "second operand");
  check_pair("bmm", a, b);
  if (a.size(0) != b.size(0))
    throw_shape_error("bmm", "batch sizes of shapes " + format_shape(a.sizes()) + " and " + format_shape(b.sizes()) +
                                 " differ: dimension 0 is " + std::to_string(a.size(0)) + " vs " + std::to_string(b.size(0)),
                      "bmm does not broadcast; use matmul() to broadcast batch dims");
  if (a.size(2) != b.size(1)) throw_mismatch("bmm", a, b, 2, 1);
  return bmm_core(a, b);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&a, &b}); ac) return matmul(ac[0], ac[1]);
  OpGuard guard("matmul", a, b);
  const int64_t da = a.dim(), db = b.dim();
  if (da == 0 || db == 0)
    throw_shape_error("matmul", "both arguments need to be at least 1-D, but they are " + std::to_string(da) + "-D " +
                                    format_shape(a.sizes()) + " and " + std::to_string(db) + "-D " + format_shape(b.sizes()),
                      "use mul() (or *) to multiply by a scalar");
  check_pair("matmul", a, b);
  if (a.size(-1) != b.size(db >= 2 ? -2 : -1)) throw_mismatch("matmul", a, b, da - 1, db >= 2 ? db - 2 : 0);
  if (da == 1 && db == 1) return dot_core(a, b);
  if (da == 2 && db == 1) return mv_core(a, b);
  if (da == 1 && db == 2) return squeeze(mm_core(unsqueeze(a, 0), b), 0);
  if (da == 2 && db == 2) return mm_core(a, b);
  if (da >= 3 && db <= 2) {  // fold a's batch into rows: one GEMM
    Shape lead(a.sizes().begin(), a.sizes().end() - 1);
    Tensor rows = reshape(a, {numel_of(lead), a.size(-1)});
    if (db == 1) return view(mv_core(rows, b), lead);
    return view(mm_core(rows, b), concat(lead, {b.size(1)}));
  }
  const Tensor a2 = da == 1 ? unsqueeze(a, 0) : a, b2 = db == 1 ? unsqueeze(b, 1) : b;
  const Shape batch = matmul_batch(a2, b2);
  const int64_t m = a2.size(-2), k = a2.size(-1), n = b2.size(-1);
  Tensor out = bmm_core(expand(a2, concat(batch, {m, k})), expand(b2, concat(batch, {k, n})));
  if (da == 1) out = squeeze(out, -2);
  if (db == 1) out = squeeze(out, -1);
  return out;
}

Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta_s, const Scalar& alpha_s) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&self, &a, &b}); ac)
    return addmm(ac[0], ac[1], ac[2], beta_s, alpha_s);
  OpGuard guard("addmm", self, a, b);
  check_matrix("addmm", a, 2, "first operand");
  check_matrix("addmm", b, 2, "second operand");
  static const char* const names[] = {"first operand", "second operand", "input (self)"};
  check_dtypes("addmm", {a, b, self}, names);
  detail::op_device("addmm", a, b, self);
  if (a.size(1) != b.size(0)) throw_mismatch("addmm", a, b, 1, 0);
  const Shape shape{a.size(0), b.size(1)};
  bool fits = self.dim() <= 2;
  for (int64_t d = 1; fits && d <= self.dim(); ++d) fits = self.size(-d) == 1 || self.size(-d) == shape[size_t(2 - d)];
  if (!fits)
    throw_shape_error("addmm", "input (self) of shape " + format_shape(self.sizes()) +
                                   " cannot be broadcast to the product's shape " + format_shape(shape) + " (" +
                                   format_shape(a.sizes()) + " @ " + format_shape(b.sizes()) + ")");
  const double beta = beta_s.to_double(), alpha = alpha_s.to_double();
  Tensor out = make_tensor(shape, a.dtype(), a.device());
  if (beta != 0.0) detail::copy_into(out, self.sizes() == shape ? self : expand(detach(self), shape));
  matmul_into(out, a, b, alpha, beta);
  if (autograd::any_requires_grad(self, a, b)) {
    const bool ga = a.requires_grad(), gb = b.requires_grad();
    record("AddmmBackward0", {self, a, b}, {out},
           [sa = gb ? SavedTensor(a) : SavedTensor(), sb = ga ? SavedTensor(b) : SavedTensor(), ga, gb, alpha, beta](const TensorList& g) {
             return TensorList{scaled(g[0], beta), ga ? scaled(mm(g[0], sb.unpack().t()), alpha) : Tensor(),
                               gb ? scaled(mm(sa.unpack().t(), g[0]), alpha) : Tensor()};
           });
  }
  return out;
}

namespace detail {

LinearShapes check_linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  if (w.dim() != 2)
    throw_shape_error("linear", "expected weight to be 2-D [out_features, in_features], but got shape " + format_shape(w.sizes()));
  if (x.dim() == 0) throw_shape_error("linear", "expected input to be at least 1-D, but got a 0-D tensor");
  static const char* const names[] = {"input", "weight", "bias"};
  check_dtypes("linear", {x, w, bias}, names);
  detail::op_device("linear", x, w, bias);
  const int64_t in = w.size(1), out_f = w.size(0);
  if (x.size(-1) != in) {
    const bool flipped = w.size(0) == x.size(-1);
    throw_shape_error("linear", "input " + format_shape(x.sizes()) + " and weight " + format_shape(w.sizes()) +
                                    " cannot be multiplied: dimension " + std::to_string(x.dim() - 1) + " of the input (" +
                                    std::to_string(x.size(-1)) + ") != dimension 1 of the weight (" + std::to_string(in) + ")",
                      flipped ? "the weight looks transposed: linear expects [out_features, in_features] = [" +
                                    std::to_string(in) + ", " + std::to_string(x.size(-1)) + "]; pass weight.t()"
                              : "in_features of the layer (" + std::to_string(in) + ") must equal the input's last dimension");
  }
  if (bias.defined() && (bias.dim() > 1 || (bias.numel() != out_f && bias.numel() != 1)))
    throw_shape_error("linear", "bias of shape " + format_shape(bias.sizes()) + " does not match out_features " +
                                    std::to_string(out_f) + " of weight " + format_shape(w.sizes()),
                      "bias should have shape [" + std::to_string(out_f) + "]");
  LinearShapes s;
  s.in = in;
  s.out_f = out_f;
  s.rows = in == 0 ? numel_of(Shape(x.sizes().begin(), x.sizes().end() - 1)) : x.numel() / in;
  {
    NoGradGuard no_grad;
    s.x2 = x.dim() == 2 ? x : reshape(x, {s.rows, in});
  }
  s.out_shape.assign(x.sizes().begin(), x.sizes().end() - 1);
  s.out_shape.push_back(out_f);
  return s;
}

Tensor linear_rows(const LinearShapes& s, const Tensor& out) { return alias(out, {s.rows, s.out_f}, {s.out_f, 1}); }

void linear_gemm(const LinearShapes& s, const Tensor& out, const Tensor& w, bool accumulate) {
  matmul_into(linear_rows(s, out), s.x2, transposed(w), 1.0, accumulate ? 1.0 : 0.0);
}

void record_linear_backward(const LinearShapes& s, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out) {
  if (!autograd::any_requires_grad(x, w, bias)) return;
  const bool gx = x.requires_grad(), gw = w.requires_grad(), gb = bias.defined() && bias.requires_grad();
  record(bias.defined() ? "AddmmBackward0" : "MmBackward0", {x, w, bias}, {out},
         [sx = gw ? SavedTensor(s.x2) : SavedTensor(), sw = gx ? SavedTensor(w) : SavedTensor(), xshape = x.sizes(),
          rows = s.rows, out_f = s.out_f, gx, gw, gb](const TensorList& g) {
           Tensor g2 = reshape(g[0], {rows, out_f});
           TensorList grads(3);
           if (gx) grads[0] = reshape(mm(g2, sw.unpack()), xshape);
           if (gw) grads[1] = mm(g2.t(), sx.unpack());
           if (gb) {
             OpGuard sum_guard("sum", g2);
             if (!g2.is_cpu()) {
               grads[2] = detail::cuda_reduce(dispatch::ReduceOp::Sum, g2, {0}, false, g2.dtype(), "sum").first;
             } else {
               Tensor gc = contiguous(g2);
               grads[2] = make_tensor({out_f}, gc.dtype());
               if (rows > 1 && (gc.dtype() == kFloat32 || gc.dtype() == kFloat64))  // vectorised, ops/column_sums.h
                 detail::column_sums(gc, {rows, out_f}, grads[2], 1.0);
               else
                 cpu::sum_rows(cpu_view(grads[2]), cpu_view(gc));
             }
           }
           return grads;
         });
}

}  // namespace detail

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&x, &w, &bias}); ac)
    return linear(ac[0], ac[1], ac[2]);
  OpGuard guard("linear", x, w, bias);
  const detail::LinearShapes s = detail::check_linear(x, w, bias);
  Tensor out = make_tensor(s.out_shape, x.dtype(), x.device());
  if (bias.defined()) {
    const Tensor rows = detail::linear_rows(s, out);
    detail::copy_into(rows, bias.sizes() == rows.sizes() ? bias : expand(detach(bias), rows.sizes()));
  }
  detail::linear_gemm(s, out, w, bias.defined());
  detail::record_linear_backward(s, x, w, bias, out);
  return out;
}

}  // namespace rt
