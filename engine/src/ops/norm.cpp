// layer_norm and batch_norm: fused forward that saves mean/rstd, fused backward for input, weight and bias.
#include <cmath>

#include "../amp/autocast_policy.h"
#include "dispatch_stubs.h"
#include "op_device.h"
#include "device_copy.h"
#include "cpu/loops.h"
#include "inplace.h"
#include "isa_loops.h"
#include "nn_rows.h"
#include "rt/autograd/grad_mode.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/creation.h"
#include "rt/ops/nn_functional.h"

namespace rt {
using autograd::SavedTensor;
using namespace nnops;

namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
const T* ptr_or_null(const Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; }

void check_param(const char* op, const char* name, const Tensor& p, const Shape& want, const Tensor& x) {
  if (p.defined() && p.sizes() != want)
    throw_shape_error(op, std::string(name) + " has shape " + format_shape(p.sizes()) + " but expected " +
                              format_shape(want) + " for input " + format_shape(x.sizes()));
}

// ---- layer_norm --------------------------------------------------------------------------

template <typename T>
void layer_norm_forward(const T* x, const T* w, const T* b, T* y, double* mean, double* rstd, int64_t M, int64_t D,
                        double eps) {
  if constexpr (std::is_same_v<T, float>) {  // the per-level row kernel (kernels/cpu/isa/layer_norm_rows.cpp)
    const cpu::IsaKernels& k = cpu::isa_kernels();
    detail::parallel_row_ranges(M, D, [&](int64_t r0, int64_t r1) {
      k.layer_norm_rows_f32(y + r0 * D, mean + r0, rstd + r0, x + r0 * D, w, b, r1 - r0, D, float(eps));
    });
    return;
  }
  using C = compute_t<T>;
  using A = acc_t<T>;
  parallel_for(M, M * D, [&](int64_t r) {
    const T* xr = x + r * D;
    A s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t j = 0; j < D; ++j) s += A(C(xr[j]));
    const A mu = s / A(D);
    A v = 0;
#pragma omp simd reduction(+ : v)
    for (int64_t j = 0; j < D; ++j) {
      const A d = A(C(xr[j])) - mu;
      v += d * d;
    }
    const A rs = A(1) / std::sqrt(v / A(D) + A(eps));
    mean[r] = double(mu);
    rstd[r] = double(rs);
    T* yr = y + r * D;
#pragma omp simd
    for (int64_t j = 0; j < D; ++j) {
      C h = C((A(C(xr[j])) - mu) * rs);
      if (w) h *= C(w[j]);
      if (b) h += C(b[j]);
      yr[j] = T(h);
    }
  });
}

// dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w; dw = sum(g * xhat), db = sum(g)
// accumulated per fixed chunk of rows, then chunks summed in order (thread-count independent).
template <typename T>
void layer_norm_backward(const T* x, const T* w, const T* g, const double* mean, const double* rstd, int64_t M,
                         int64_t D, T* dx, double* dw, double* db) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  constexpr int64_t kRows = 64;
  const int64_t chunks = (M + kRows - 1) / kRows;
  const bool params = dw || db;
  std::vector<A> part(params ? size_t(chunks * 2 * D) : 0, A(0));
  parallel_for(chunks, M * D, [&](int64_t c) {
    A* pw = params ? part.data() + c * 2 * D : nullptr;
    if constexpr (std::is_same_v<T, float>) {  // the per-level row kernel
      const int64_t r0 = c * kRows, n = std::min(M, r0 + kRows) - r0;
      cpu::isa_kernels().layer_norm_backward_rows_f32(dx ? dx + r0 * D : nullptr, pw, pw ? pw + D : nullptr, x + r0 * D,
                                                      w, g + r0 * D, mean + r0, rstd + r0, n, D);
      return;
    }
    for (int64_t r = c * kRows, re = std::min(M, (c + 1) * kRows); r < re; ++r) {
      const T* xr = x + r * D;
      const T* gr = g + r * D;
      const A mu = A(mean[r]), rs = A(rstd[r]);
      if (pw)
#pragma omp simd
        for (int64_t j = 0; j < D; ++j) {
          const A gv = A(C(gr[j]));
          pw[j] += gv * (A(C(xr[j])) - mu) * rs;
          pw[D + j] += gv;
        }
      if (!dx) continue;
      A sa = 0, sb = 0;
#pragma omp simd reduction(+ : sa, sb)
      for (int64_t j = 0; j < D; ++j) {
        const A gw = A(C(gr[j])) * (w ? A(C(w[j])) : A(1));
        sa += gw;
        sb += gw * (A(C(xr[j])) - mu) * rs;
      }
      sa /= A(D);
      sb /= A(D);
      T* o = dx + r * D;
#pragma omp simd
      for (int64_t j = 0; j < D; ++j) {
        const A gw = A(C(gr[j])) * (w ? A(C(w[j])) : A(1));
        o[j] = T(C(rs * (gw - sa - (A(C(xr[j])) - mu) * rs * sb)));
      }
    }
  });
  if (!params) return;
  for (int64_t j = 0; j < D; ++j) dw[j] = db[j] = 0;
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t j = 0; j < D; ++j) {
      dw[j] += double(part[size_t(c * 2 * D + j)]);
      db[j] += double(part[size_t(c * 2 * D + D + j)]);
    }
}

// ---- batch_norm --------------------------------------------------------------------------

struct ChannelLayout {
  int64_t n = 1, c = 1, inner = 1;
  int64_t count() const { return n * inner; }
};

// Calls f(offset) for each of channel c's rows: L.n runs of L.inner contiguous elements. The kernels
// below vectorise along a row (omp simd), so a channel costs n short loops rather than n * inner calls.
template <typename F>
void for_channel_rows(const ChannelLayout& L, int64_t c, F&& f) {
  for (int64_t i = 0; i < L.n; ++i) f((i * L.c + c) * L.inner);
}

template <typename T>
void batch_stats(const T* x, const ChannelLayout& L, double* mean, double* var) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  const int64_t inner = L.inner;
  parallel_for(L.c, L.c * L.count(), [&](int64_t c) {
    A s = 0;
    for_channel_rows(L, c, [&](int64_t off) {
      const T* r = x + off;
      A rs = 0;
#pragma omp simd reduction(+ : rs)
      for (int64_t k = 0; k < inner; ++k) rs += A(C(r[k]));
      s += rs;
    });
    const A mu = s / A(L.count());
    A q = 0;
    for_channel_rows(L, c, [&](int64_t off) {
      const T* r = x + off;
      A rq = 0;
#pragma omp simd reduction(+ : rq)
      for (int64_t k = 0; k < inner; ++k) rq += (A(C(r[k])) - mu) * (A(C(r[k])) - mu);
      q += rq;
    });
    mean[c] = double(mu);
    var[c] = double(q / A(L.count()));
  });
}

template <typename T>
void batch_norm_apply(const T* x, const T* w, const T* b, const double* mean, const double* invstd,
                      const ChannelLayout& L, T* y) {
  using C = compute_t<T>;
  const int64_t inner = L.inner;
  parallel_for(L.c, L.c * L.count(), [&](int64_t c) {
    const C scale = C(invstd[c]) * (w ? C(w[c]) : C(1));
    const C shift = (b ? C(b[c]) : C(0)) - C(mean[c]) * scale;
    for_channel_rows(L, c, [&](int64_t off) {
      const T* r = x + off;
      T* o = y + off;
#pragma omp simd
      for (int64_t k = 0; k < inner; ++k) o[k] = T(C(r[k]) * scale + shift);
    });
  });
}

template <typename T>
void batch_norm_backward(const T* x, const T* w, const T* g, const double* mean, const double* invstd,
                         const ChannelLayout& L, bool training, T* dx, double* dw, double* db) {
  using C = compute_t<T>;
  using A = acc_t<T>;
  const int64_t inner = L.inner;
  parallel_for(L.c, L.c * L.count(), [&](int64_t c) {
    const A mu = A(mean[c]), is = A(invstd[c]);
    A sg = 0, sgx = 0;
    for_channel_rows(L, c, [&](int64_t off) {
      const T* xr = x + off;
      const T* gr = g + off;
      A rg = 0, rgx = 0;
#pragma omp simd reduction(+ : rg, rgx)
      for (int64_t k = 0; k < inner; ++k) {
        const A gv = A(C(gr[k]));
        rg += gv;
        rgx += gv * (A(C(xr[k])) - mu) * is;
      }
      sg += rg;
      sgx += rgx;
    });
    if (dw) dw[c] = double(sgx);
    if (db) db[c] = double(sg);
    if (!dx) return;
    const A wc = w ? A(C(w[c])) : A(1);
    const A m = A(L.count());
    // training: dx = wc * is * (g - mean(g) - xhat * mean(g * xhat)); eval: dx = g * wc * is.
    const A k0 = wc * is, mg = training ? sg / m : A(0), mgx = training ? sgx / m : A(0);
    for_channel_rows(L, c, [&](int64_t off) {
      const T* xr = x + off;
      const T* gr = g + off;
      T* o = dx + off;
#pragma omp simd
      for (int64_t k = 0; k < inner; ++k)
        o[k] = T(C(k0 * (A(C(gr[k])) - mg - (A(C(xr[k])) - mu) * is * mgx)));
    });
  });
}

void update_running(Tensor buf, const std::vector<double>& stat, double momentum) {
  if (!buf.defined()) return;
  NoGradGuard no_grad;
  std::vector<double> old = buf.detach().to_vector<double>();
  for (size_t i = 0; i < old.size(); ++i) old[i] = (1.0 - momentum) * old[i] + momentum * stat[i];
  detail::copy_into(buf, from_vector(old, buf.sizes()));
  buf.bump_version();
}

struct ParamMeta {
  Shape shape;
  ScalarType dtype = kFloat32;
  explicit ParamMeta(const Tensor& t) : shape(t.defined() ? t.sizes() : Shape{}), dtype(t.defined() ? t.dtype() : kFloat32) {}
};

Tensor param_grad(const std::vector<double>& v, const ParamMeta& m) {
  return detail::convert(from_vector(v, m.shape), m.dtype);
}

// The CPU kernel of dispatch::layer_norm: x, weight and bias contiguous in out's dtype (weight, bias may be undefined).
void layer_norm_cpu(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x, const Tensor& weight,
                    const Tensor& bias, int64_t D, double eps) {
  visit_float(x.dtype(), "layer_norm", [&]<typename T>() {
    layer_norm_forward<T>(x.data_ptr<T>(), ptr_or_null<T>(weight), ptr_or_null<T>(bias), out.data_ptr<T>(),
                          mean.data_ptr<double>(), rstd.data_ptr<double>(), mean.numel(), D, eps);
  });
}
RT_REGISTER_KERNEL(dispatch::layer_norm, DeviceType::CPU, layer_norm_cpu);

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::Float32OnCuda, {&x, &weight, &bias}); ac)
    return layer_norm(ac[0], normalized_shape, ac[1], ac[2], eps);
  OpGuard guard("layer_norm", x, weight, bias);
  const int64_t nd = int64_t(normalized_shape.size());
  const Shape& xs = x.sizes();
  bool ok = nd >= 1 && nd <= x.dim();
  for (int64_t i = 0; ok && i < nd; ++i) ok = xs[size_t(x.dim() - nd + i)] == normalized_shape[size_t(i)];
  if (!ok) {
    std::string want = "[*";
    for (int64_t s : normalized_shape) want += ", " + std::to_string(s);
    throw_shape_error("layer_norm", "given normalized_shape=" + format_shape(normalized_shape) +
                                        ", expected input with shape " + want + "], but got input of size " +
                                        format_shape(xs),
                      "normalized_shape must equal the input's last dimensions (e.g. {x.size(-1)})");
  }
  check_param("layer_norm", "weight", weight, normalized_shape, x);
  check_param("layer_norm", "bias", bias, normalized_shape, x);
  const ScalarType dt = x.dtype();
  const int64_t D = numel_of(normalized_shape), M = D == 0 ? 0 : x.numel() / D;
  Tensor xc = dense(x, dt);
  Tensor w = weight.defined() ? dense(weight, dt) : Tensor(), b = bias.defined() ? dense(bias, dt) : Tensor();
  const Device dev = detail::op_device("layer_norm", x, weight, bias);
  Tensor out = make_tensor(xs, dt, dev);
  Tensor mean = make_tensor({M}, kFloat64, dev), rstd = make_tensor({M}, kFloat64, dev);
  visit_float(dt, "layer_norm", [&]<typename T>() {  // refuses integer dtypes on every device
    dispatch::layer_norm(dev, out, mean, rstd, xc, w, b, D, eps);
  });
  if (autograd::any_requires_grad(x, weight, bias)) {
    const bool need[3] = {x.requires_grad(), weight.defined() && weight.requires_grad(),
                          bias.defined() && bias.requires_grad()};
    autograd::record("NativeLayerNormBackward0", {x, weight, bias}, {out},
                     [need, M, D, sx = SavedTensor(xc), sw = SavedTensor(w), sm = SavedTensor(mean),
                      sr = SavedTensor(rstd), wt = ParamMeta(weight), bt = ParamMeta(bias)](const TensorList& g) {
                       Tensor xv = sx.unpack(), wv = sw.defined() ? sw.unpack() : Tensor();
                       Tensor gc = dense(g[0], xv.dtype());
                       Tensor dx = need[0] ? make_tensor(xv.sizes(), xv.dtype(), xv.device()) : Tensor();
                       if (!xv.is_cpu()) {
                         Tensor gw = need[1] ? make_tensor(wt.shape, wt.dtype, xv.device()) : Tensor();
                         Tensor gb = need[2] ? make_tensor(bt.shape, bt.dtype, xv.device()) : Tensor();
                         dispatch::layer_norm_backward(gc.device(), dx, gw, gb, gc, xv, wv, sm.unpack(), sr.unpack(), D);
                         return TensorList{dx, gw, gb};
                       }
                       std::vector<double> dw(static_cast<size_t>(D)), db(static_cast<size_t>(D));
                       const bool params = need[1] || need[2];
                       visit_float(xv.dtype(), "layer_norm_backward", [&]<typename T>() {
                         layer_norm_backward<T>(xv.data_ptr<T>(), ptr_or_null<T>(wv), gc.data_ptr<T>(),
                                                sm.unpack().data_ptr<double>(), sr.unpack().data_ptr<double>(), M, D,
                                                need[0] ? dx.data_ptr<T>() : nullptr, params ? dw.data() : nullptr,
                                                params ? db.data() : nullptr);
                       });
                       return TensorList{dx, need[1] ? param_grad(dw, wt) : Tensor(),
                                         need[2] ? param_grad(db, bt) : Tensor()};
                     });
  }
  return out;
}

namespace {
// batch_norm on a GPU: statistics, normalisation and the running-stat update in one kernel
// (kernels/cuda/batch_norm.h); the parameters keep their own dtype, as on the CPU.
Tensor batch_norm_cuda(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, bool training, double momentum, double eps) {
  if (!is_floating(x.dtype()))
    throw DTypeError("batch_norm: expected a floating point input, got " + std::string(dtype_name(x.dtype())) +
                     module_context());
  const int64_t C = x.size(1);
  Tensor xc = x.contiguous();
  Tensor out = make_tensor(x.sizes(), x.dtype(), x.device());
  Tensor mean = make_tensor({C}, kFloat64, x.device()), invstd = make_tensor({C}, kFloat64, x.device());
  {
    NoGradGuard no_grad;
    dispatch::batch_norm(out.device(), out, mean, invstd, xc, weight.defined() ? weight.detach().contiguous() : Tensor(),
                          bias.defined() ? bias.detach().contiguous() : Tensor(), running_mean, running_var, training,
                          momentum, eps);
  }
  if (training) {
    if (running_mean.defined()) running_mean.bump_version();
    if (running_var.defined()) running_var.bump_version();
  }
  if (autograd::any_requires_grad(x, weight, bias)) {
    const bool need[3] = {x.requires_grad(), weight.defined() && weight.requires_grad(),
                          bias.defined() && bias.requires_grad()};
    autograd::record("NativeBatchNormBackward0", {x, weight, bias}, {out},
                     [need, training, mean, invstd, sx = SavedTensor(xc), sw = SavedTensor(weight.defined() ? weight.detach().contiguous() : Tensor()),
                      wt = ParamMeta(weight), bt = ParamMeta(bias)](const TensorList& g) {
                       Tensor xv = sx.unpack(), wv = sw.defined() ? sw.unpack() : Tensor();
                       Tensor dx = need[0] ? make_tensor(xv.sizes(), xv.dtype(), xv.device()) : Tensor();
                       Tensor gw = need[1] ? make_tensor(wt.shape, wt.dtype, xv.device()) : Tensor();
                       Tensor gb = need[2] ? make_tensor(bt.shape, bt.dtype, xv.device()) : Tensor();
                       dispatch::batch_norm_backward(g[0].device(), dx, gw, gb, g[0].contiguous(), xv, wv, mean, invstd, training);
                       return TensorList{dx, gw, gb};
                     });
  }
  return out;
}
}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  OpGuard guard("batch_norm", x, running_mean, running_var, weight, bias);
  if (x.dim() < 2)
    throw_shape_error("batch_norm", "expected input of shape [N, C] or [N, C, ...], got " + format_shape(x.sizes()),
                      "add a batch dimension with unsqueeze(0)");
  ChannelLayout L;
  L.n = x.size(0);
  L.c = x.size(1);
  for (int64_t d = 2; d < x.dim(); ++d) L.inner *= x.size(d);
  const Shape cshape{L.c};
  check_param("batch_norm", "weight", weight, cshape, x);
  check_param("batch_norm", "bias", bias, cshape, x);
  check_param("batch_norm", "running_mean", running_mean, cshape, x);
  check_param("batch_norm", "running_var", running_var, cshape, x);
  if (!training && (!running_mean.defined() || !running_var.defined()))
    throw ValueError("batch_norm: running_mean and running_var must be defined in eval mode (training=false)" +
                     module_context());
  if (training && L.count() <= 1)
    throw ValueError("batch_norm: expected more than 1 value per channel when training, got input size " +
                     format_shape(x.sizes()) + module_context());
  const ScalarType dt = x.dtype();
  if (!detail::op_device("batch_norm", x, running_mean, running_var, weight, bias).is_cpu())
    return batch_norm_cuda(x, running_mean, running_var, weight, bias, training, momentum, eps);
  Tensor xc = dense(x, dt);
  Tensor w = weight.defined() ? dense(weight, dt) : Tensor(), b = bias.defined() ? dense(bias, dt) : Tensor();
  Tensor out = make_tensor(x.sizes(), dt);
  std::vector<double> mean(static_cast<size_t>(L.c)), var(static_cast<size_t>(L.c));
  visit_float(dt, "batch_norm", [&]<typename T>() {
    if (training) {
      batch_stats<T>(xc.data_ptr<T>(), L, mean.data(), var.data());
    } else {
      mean = running_mean.detach().to_vector<double>();
      var = running_var.detach().to_vector<double>();
    }
  });
  std::vector<double> invstd(static_cast<size_t>(L.c));
  for (size_t c = 0; c < invstd.size(); ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  visit_float(dt, "batch_norm", [&]<typename T>() {
    batch_norm_apply<T>(xc.data_ptr<T>(), ptr_or_null<T>(w), ptr_or_null<T>(b), mean.data(), invstd.data(), L,
                        out.data_ptr<T>());
  });
  if (training) {
    const double unbias = double(L.count()) / double(L.count() - 1);
    std::vector<double> uvar(var);
    for (double& v : uvar) v *= unbias;
    update_running(running_mean, mean, momentum);
    update_running(running_var, uvar, momentum);
  }
  if (autograd::any_requires_grad(x, weight, bias)) {
    const bool need[3] = {x.requires_grad(), weight.defined() && weight.requires_grad(),
                          bias.defined() && bias.requires_grad()};
    autograd::record("NativeBatchNormBackward0", {x, weight, bias}, {out},
                     [need, L, training, mean, invstd, sx = SavedTensor(xc), sw = SavedTensor(w), wt = ParamMeta(weight),
                      bt = ParamMeta(bias)](const TensorList& g) {
                       Tensor xv = sx.unpack(), wv = sw.defined() ? sw.unpack() : Tensor();
                       Tensor gc = dense(g[0], xv.dtype());
                       Tensor dx = need[0] ? make_tensor(xv.sizes(), xv.dtype(), xv.device()) : Tensor();
                       std::vector<double> dw(static_cast<size_t>(L.c)), db(static_cast<size_t>(L.c));
                       visit_float(xv.dtype(), "batch_norm_backward", [&]<typename T>() {
                         batch_norm_backward<T>(xv.data_ptr<T>(), ptr_or_null<T>(wv), gc.data_ptr<T>(), mean.data(),
                                                invstd.data(), L, training, need[0] ? dx.data_ptr<T>() : nullptr,
                                                dw.data(), db.data());
                       });
                       return TensorList{dx, need[1] ? param_grad(dw, wt) : Tensor(),
                                         need[2] ? param_grad(db, bt) : Tensor()};
                     });
  }
  return out;
}

}  // namespace rt
