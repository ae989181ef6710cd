// conv1d and conv2d on the CPU: through oneDNN where it has a fast kernel (float32, and bfloat16 where
// the CPU has it), otherwise im2col + GEMM per image with the backward through col2im (Note [CPU
// convolution paths]). conv1d runs as a conv2d of height 1. Other half types compute in float32.
#include <omp.h>

#include <algorithm>
#include <optional>

#include "../amp/autocast_policy.h"
#include "dispatch_stubs.h"
#include "op_device.h"
#include "device_copy.h"
#include "cpu/gemm.h"
#include "cpu/im2col.h"
#include "cpu/loops.h"
#include "cpu/onednn/convolution.h"
#include "onednn_scratch.h"
#include "rt/backends.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/linalg.h"
#include "rt/ops/view.h"

namespace rt {
namespace {

using cpu::ConvGeometry;

struct ConvShape {
  int64_t N, Cin, Cout, groups;
  ConvGeometry g;  // per group: g.C = Cin / groups
  int64_t in_plane() const { return g.H * g.W; }
  int64_t L() const { return g.col_cols(); }
  int64_t cog() const { return Cout / groups; }
};

// Runs fn(n, slot) for every image: in parallel over images, each thread using its own column
// buffer `slot` and single-threaded GEMMs (Note [GEMM threads] in gemm.cpp), when there are several.
template <typename F>
void for_images(int64_t N, F fn) {
  const int nt = cpu::num_threads();
  if (N > 1 && nt > 1 && !omp_in_parallel()) {
    const CancelToken cancel = CancelToken::current();  // the workers poll the caller's request
#pragma omp parallel for schedule(static) num_threads(int(std::min<int64_t>(nt, N)))
    for (int64_t n = 0; n < N; ++n)
      if (!cancel.requested()) fn(n, omp_get_thread_num());
    check_cancel();
  } else {
    for (int64_t n = 0; n < N; ++n) {
      check_cancel();
      fn(n, 0);
    }
  }
}

int64_t buffer_slots(int64_t N) {
  return N > 1 && !omp_in_parallel() ? std::min<int64_t>(cpu::num_threads(), N) : 1;
}

template <typename T>
void forward_kernel(const ConvShape& s, const T* in, const T* w, const T* bias, T* out) {
  const ConvGeometry& g = s.g;
  const int64_t L = s.L(), CKK = g.col_rows(), cog = s.cog();
  const bool direct = g.is_pointwise();
  Tensor cols = make_tensor({direct ? 0 : buffer_slots(s.N) * CKK * L}, dtype_of_v<T>);
  for_images(s.N, [&](int64_t n, int slot) {
    T* o = out + n * s.Cout * L;
    if (bias)
      for (int64_t c = 0; c < s.Cout; ++c) std::fill(o + c * L, o + (c + 1) * L, bias[c]);
    for (int64_t grp = 0; grp < s.groups; ++grp) {
      const T* img = in + (n * s.Cin + grp * g.C) * s.in_plane();
      const T* col = img;
      if (!direct) {
        T* buf = static_cast<T*>(cols.raw_data()) + slot * CKK * L;
        cpu::im2col(img, g, buf);
        col = buf;
      }
      cpu::gemm<T>(false, false, cog, L, CKK, T(1), w + grp * cog * CKK, CKK, col, L, T(bias ? 1 : 0),
                   o + grp * cog * L, L);
    }
  });
}

template <typename T>
void grad_input_kernel(const ConvShape& s, const T* gout, const T* w, T* gin) {
  const ConvGeometry& g = s.g;
  const int64_t L = s.L(), CKK = g.col_rows(), cog = s.cog();
  const bool direct = g.is_pointwise();
  Tensor cols = make_tensor({direct ? 0 : buffer_slots(s.N) * CKK * L}, dtype_of_v<T>);
  for_images(s.N, [&](int64_t n, int slot) {
    for (int64_t grp = 0; grp < s.groups; ++grp) {
      T* img = gin + (n * s.Cin + grp * g.C) * s.in_plane();
      const T* go = gout + (n * s.Cout + grp * cog) * L;
      const T* wg = w + grp * cog * CKK;
      if (direct) {
        cpu::gemm<T>(true, false, CKK, L, cog, T(1), wg, CKK, go, L, T(0), img, L);
        continue;
      }
      T* buf = static_cast<T*>(cols.raw_data()) + slot * CKK * L;
      cpu::gemm<T>(true, false, CKK, L, cog, T(1), wg, CKK, go, L, T(0), buf, L);
      std::fill(img, img + g.C * s.in_plane(), T(0));
      cpu::col2im(buf, g, img);
    }
  });
}

// Sums over the batch in chunks of images laid side by side, one GEMM per chunk and group; the
// chunk size depends only on the shapes, so the result does not depend on the thread count.
template <typename T>
void grad_weight_kernel(const ConvShape& s, const T* in, const T* gout, T* gw) {
  ConvGeometry all = s.g;
  all.C = s.Cin;
  const int64_t L = s.L(), rows = all.col_rows(), CKK = s.g.col_rows(), cog = s.cog();
  constexpr int64_t kChunkElems = int64_t(1) << 22;
  const int64_t chunk = std::clamp<int64_t>(kChunkElems / std::max<int64_t>(1, rows * L), 1, std::max<int64_t>(1, s.N));
  Tensor col_buf = make_tensor({rows * chunk * L}, dtype_of_v<T>), go_buf = make_tensor({s.Cout * chunk * L}, dtype_of_v<T>);
  T* cols = static_cast<T*>(col_buf.raw_data());
  T* gos = static_cast<T*>(go_buf.raw_data());
  if (s.N == 0) std::fill(gw, gw + s.Cout * CKK, T(0));
  for (int64_t n0 = 0; n0 < s.N; n0 += chunk) {
    check_cancel();
    const int64_t nb = std::min(chunk, s.N - n0), ld = nb * L;
    auto fill = [&](int64_t j) {
      cpu::im2col(in + (n0 + j) * s.Cin * s.in_plane(), all, cols + j * L, ld);
      for (int64_t c = 0; c < s.Cout; ++c) {
        const T* src = gout + ((n0 + j) * s.Cout + c) * L;
        std::copy(src, src + L, gos + c * ld + j * L);
      }
    };
    if (nb > 1 && nb * rows * L >= cpu::kParallelGrain && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
      for (int64_t j = 0; j < nb; ++j) fill(j);
    } else {
      for (int64_t j = 0; j < nb; ++j) fill(j);
    }
    for (int64_t grp = 0; grp < s.groups; ++grp)
      cpu::gemm<T>(false, true, cog, CKK, ld, T(1), gos + grp * cog * ld, ld, cols + grp * CKK * ld, ld,
                   T(n0 == 0 ? 0 : 1), gw + grp * cog * CKK, CKK);
  }
}

template <typename T>
void grad_bias_kernel(const ConvShape& s, const T* gout, T* gb) {
  const int64_t L = s.L();
  auto one = [&](int64_t c) {
    double acc = 0;
    for (int64_t n = 0; n < s.N; ++n) {
      const T* p = gout + (n * s.Cout + c) * L;
      for (int64_t l = 0; l < L; ++l) acc += double(p[l]);
    }
    gb[c] = T(acc);
  };
  if (s.N * s.Cout * L >= cpu::kParallelGrain && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < s.Cout; ++c) one(c);
  } else {
    for (int64_t c = 0; c < s.Cout; ++c) one(c);
  }
}

ScalarType compute_dtype(ScalarType t) { return t == kFloat64 ? kFloat64 : kFloat32; }


// Contiguous, in dtype dt (no autograd).
Tensor dense(const Tensor& t, ScalarType dt) {
  if (t.dtype() == dt && t.is_contiguous()) return t;
  Tensor out = make_tensor(t.sizes(), dt, t.device());
  detail::copy_into(out, t);
  return out;
}

Tensor back_to(const Tensor& t, ScalarType dt) { return t.dtype() == dt ? t : dense(t, dt); }

template <typename F>
void visit_compute(ScalarType ct, F&& f) {
  if (ct == kFloat64) f.template operator()<double>();
  else f.template operator()<float>();
}

// conv on a GPU, in the input's dtype (cuBLAS multiplies half types with float accumulation).
Tensor conv_core_cuda(const ConvShape& s, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  detail::op_device("conv2d", input, weight, bias);
  const ScalarType dt = input.dtype();
  const Tensor in = input.contiguous(), w = weight.contiguous(), b = bias.defined() ? bias.contiguous() : Tensor();
  Tensor out = make_tensor({s.N, s.Cout, s.g.oH, s.g.oW}, dt, input.device());
  dispatch::conv2d(out.device(), out, in, w, b, s.g, s.groups);
  if (!autograd::any_requires_grad(input, weight, bias)) return out;
  const bool gi = input.requires_grad(), gw = weight.requires_grad(), gb = bias.defined() && bias.requires_grad();
  using autograd::SavedTensor;
  autograd::record("ConvolutionBackward0", {input, weight, bias}, {out},
                   [s, si = SavedTensor(in), sw = SavedTensor(w), gi, gw, gb](const TensorList& grads) {
                     OpGuard guard("convolution_backward", grads[0]);
                     const Tensor x = si.unpack(), wv = sw.unpack(), go = grads[0].contiguous();
                     TensorList r(3);
                     if (gi) r[0] = make_tensor(x.sizes(), x.dtype(), x.device());
                     if (gw) r[1] = make_tensor(wv.sizes(), wv.dtype(), wv.device());
                     if (gb) r[2] = make_tensor({s.Cout}, go.dtype(), go.device());
                     dispatch::conv2d_backward(go.device(), r[0], r[1], r[2], go, x, wv, s.g, s.groups);
                     return r;
                   });
  return out;
}

// Note [CPU convolution paths]
// While rt::backends::mkldnn is enabled, each pass (forward, input gradient, weight and bias gradients)
// first asks oneDNN for a plan (kernels/cpu/onednn/convolution.h); oneDNN declines float64 and any
// geometry it has only reference code for, and that pass runs im2col + GEMM. The path that ran is a
// nested op, under PyTorch's names, so profiles and observers show it: "mkldnn_convolution" or
// "_slow_conv2d_forward" inside conv2d, "mkldnn_convolution_backward" or "_slow_conv2d_backward" inside
// convolution_backward (both, when the passes split).
cpu::onednn::ConvProblem onednn_problem(const ConvShape& s, ScalarType ct, bool bias) {
  return {.N = s.N, .Cin = s.Cin, .Cout = s.Cout, .groups = s.groups, .g = s.g, .dtype = ct, .bias = bias};
}

template <typename Plan>
std::optional<Plan> onednn_plan(bool wanted, const ConvShape& s, ScalarType ct, bool bias) {
  if (!wanted || !backends::mkldnn::enabled()) return std::nullopt;
  return Plan::plan(onednn_problem(s, ct, bias));
}

void conv_forward_cpu(const ConvShape& s, const Tensor& in, const Tensor& w, const Tensor& b, const Tensor& out) {
  if (auto conv = onednn_plan<cpu::onednn::ConvForward>(true, s, out.dtype(), b.defined())) {
    OpGuard path("mkldnn_convolution", in, w, b);
    TensorScratch scratch;
    conv->run(in.raw_data(), w.raw_data(), b.defined() ? b.raw_data() : nullptr, out.raw_data(), scratch);
    return;
  }
  OpGuard path("_slow_conv2d_forward", in, w, b);
  visit_compute(out.dtype(), [&]<typename T>() {
    forward_kernel<T>(s, static_cast<const T*>(in.raw_data()), static_cast<const T*>(w.raw_data()),
                      b.defined() ? static_cast<const T*>(b.raw_data()) : nullptr, static_cast<T*>(out.raw_data()));
  });
}

// Fills the defined ones of r = {grad_input, grad_weight, grad_bias} (allocated here) from go, in ct.
void conv_backward_cpu(const ConvShape& s, const Tensor& go, const autograd::SavedTensor& si,
                       const autograd::SavedTensor& sw, const bool need[3], ScalarType ct, TensorList& r) {
  const auto data = onednn_plan<cpu::onednn::ConvBackwardData>(need[0], s, ct, false);
  const auto weights = onednn_plan<cpu::onednn::ConvBackwardWeights>(need[1], s, ct, need[2]);
  if (ct == kBFloat16 && ((need[0] && !data) || (need[1] && !weights) || (need[2] && !weights)))
    return conv_backward_cpu(s, dense(go, kFloat32), si, sw, need, kFloat32, r);  // the loops have no bfloat16
  if (need[0]) r[0] = make_tensor({s.N, s.Cin, s.g.H, s.g.W}, ct);
  if (need[1]) r[1] = make_tensor({s.Cout, s.g.C, s.g.kH, s.g.kW}, ct);
  if (need[2]) r[2] = make_tensor({s.Cout}, ct);
  if (data || weights) {
    OpGuard path("mkldnn_convolution_backward", go);
    TensorScratch scratch;
    cpu::onednn::SharedReorders shared;  // diff_dst, reordered once for both passes
    const Tensor w = data ? dense(sw.unpack(), ct) : Tensor(), x = weights ? dense(si.unpack(), ct) : Tensor();
    if (data) data->run(go.raw_data(), w.raw_data(), r[0].raw_data(), scratch, &shared);
    if (weights)
      weights->run(x.raw_data(), go.raw_data(), r[1].raw_data(), need[2] ? r[2].raw_data() : nullptr, scratch, &shared);
  }
  const bool slow_in = need[0] && !data, slow_w = need[1] && !weights, slow_b = need[2] && !weights;
  if (!slow_in && !slow_w && !slow_b) return;
  OpGuard path("_slow_conv2d_backward", go);
  visit_compute(ct, [&]<typename T>() {
    const T* pg = static_cast<const T*>(go.raw_data());
    if (slow_in) {
      const Tensor w = dense(sw.unpack(), ct);
      grad_input_kernel<T>(s, pg, static_cast<const T*>(w.raw_data()), static_cast<T*>(r[0].raw_data()));
    }
    if (slow_w) {
      const Tensor in = dense(si.unpack(), ct);
      grad_weight_kernel<T>(s, static_cast<const T*>(in.raw_data()), pg, static_cast<T*>(r[1].raw_data()));
    }
    if (slow_b) grad_bias_kernel<T>(s, pg, static_cast<T*>(r[2].raw_data()));
  });
}

Tensor conv_core(const ConvShape& s, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (!input.is_cpu() || !weight.is_cpu()) return conv_core_cuda(s, input, weight, bias);
  const ScalarType dt = input.dtype();
  // bfloat16 stays bfloat16 where oneDNN has fast kernels for it (AVX512-BF16, AMX), as in PyTorch;
  // otherwise half types compute in float32.
  const bool native_bf16 = dt == kBFloat16 && onednn_plan<cpu::onednn::ConvForward>(true, s, dt, bias.defined());
  const ScalarType ct = native_bf16 ? kBFloat16 : compute_dtype(dt);
  Tensor in = dense(input, ct), w = dense(weight, ct), b = bias.defined() ? dense(bias, ct) : Tensor();
  Tensor out = make_tensor({s.N, s.Cout, s.g.oH, s.g.oW}, ct);
  conv_forward_cpu(s, in, w, b, out);
  out = back_to(out, dt);
  if (!autograd::any_requires_grad(input, weight, bias)) return out;
  const bool gi = input.requires_grad(), gw = weight.requires_grad(), gb = bias.defined() && bias.requires_grad();
  using autograd::SavedTensor;
  autograd::record("ConvolutionBackward0", {input, weight, bias}, {out},
                   [s, si = gw ? SavedTensor(input) : SavedTensor(), sw = gi ? SavedTensor(weight) : SavedTensor(), gi, gw, gb, dt,
                    ct](const TensorList& grads) {
                     OpGuard guard("convolution_backward", grads[0]);
                     const Tensor go = dense(grads[0], ct);
                     const bool need[3] = {gi, gw, gb};
                     TensorList r(3);
                     conv_backward_cpu(s, go, si, sw, need, ct, r);
                     for (auto& t : r)
                       if (t.defined()) t = back_to(t, dt);
                     return r;
                   });
  return out;
}

// stride/padding/dilation: one value for every spatial dim, or one each.
Shape per_dim(const char* op, const char* what, const Shape& v, size_t spatial, int64_t min) {
  if (v.size() != 1 && v.size() != spatial)
    throw ValueError(std::string(op) + ": " + what + " must have 1 or " + std::to_string(spatial) + " values, got " +
                     format_shape(v) + module_context());
  Shape out(spatial, v[0]);
  if (v.size() == spatial) out = v;
  for (int64_t x : out)
    if (x < min)
      throw ValueError(std::string(op) + ": " + what + " must be " + (min == 0 ? "non-negative" : "positive") + ", got " +
                       format_shape(v) + module_context());
  return out;
}

// Validates a conv1d/conv2d call (spatial = 1 or 2) and returns its geometry.
ConvShape check_conv(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                     const Shape& padding, const Shape& dilation, int64_t groups, size_t spatial) {
  const std::string dims = spatial == 1 ? "[N, C, L]" : "[N, C, H, W]";
  const int64_t sp = int64_t(spatial);
  if (input.dim() != sp + 1 && input.dim() != sp + 2)
    throw_shape_error(op, "expected a " + std::to_string(sp + 1) + "-D (unbatched) or " + std::to_string(sp + 2) +
                              "-D (batched) input " + dims + ", but got shape " + format_shape(input.sizes()));
  if (weight.dim() != sp + 2)
    throw_shape_error(op, "expected weight to be " + std::to_string(sp + 2) + "-D [out_channels, in_channels/groups, " +
                              (spatial == 1 ? "kL" : "kH, kW") + "], but got shape " + format_shape(weight.sizes()));
  for (const Tensor* t : {&input, &weight, &bias})
    if (t->defined() && (!is_floating(t->dtype()) || t->dtype() != input.dtype()))
      throw DTypeError(std::string(op) + ": expected floating point input, weight and bias of one dtype, but got input " +
                       std::string(dtype_name(input.dtype())) + ", weight " + std::string(dtype_name(weight.dtype())) +
                       (bias.defined() ? ", bias " + std::string(dtype_name(bias.dtype())) : "") + module_context());
  if (groups <= 0) throw ValueError(std::string(op) + ": groups must be positive, got " + std::to_string(groups) + module_context());
  const bool batched = input.dim() == sp + 2;
  const int64_t cdim = batched ? 1 : 0, C = input.size(cdim), Cout = weight.size(0);
  if (Cout % groups != 0)
    throw_shape_error(op, "out_channels (weight.size(0) = " + std::to_string(Cout) + ") must be divisible by groups (" +
                              std::to_string(groups) + "), weight " + format_shape(weight.sizes()));
  const int64_t expect = weight.size(1) * groups;
  if (C != expect) {
    const bool nhwc = spatial == 2 && input.size(-1) == expect;
    throw_shape_error(op, "input " + format_shape(input.sizes()) + " has " + std::to_string(C) + " channels (dimension " +
                              std::to_string(cdim) + "), but weight " + format_shape(weight.sizes()) + " with groups=" +
                              std::to_string(groups) + " expects " + std::to_string(expect) +
                              " (weight.size(1) * groups)",
                      nhwc ? "the input looks channels-last (NHWC); conv2d expects NCHW: use permute({0, 3, 1, 2})"
                           : "in_channels of the layer must equal the input's channel dimension");
  }
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != Cout))
    throw_shape_error(op, "bias of shape " + format_shape(bias.sizes()) + " does not match out_channels " +
                              std::to_string(Cout) + " of weight " + format_shape(weight.sizes()),
                      "bias should have shape [" + std::to_string(Cout) + "]");
  const Shape s = per_dim(op, "stride", stride, spatial, 1), p = per_dim(op, "padding", padding, spatial, 0),
              d = per_dim(op, "dilation", dilation, spatial, 1);
  Shape in_sp(input.sizes().end() - sp, input.sizes().end()), k(weight.sizes().end() - sp, weight.sizes().end());
  Shape padded(spatial), eff(spatial);
  bool too_small = false;
  for (size_t i = 0; i < spatial; ++i) {
    padded[i] = in_sp[i] + 2 * p[i];
    eff[i] = d[i] * (k[i] - 1) + 1;
    too_small = too_small || k[i] == 0 || padded[i] < eff[i];
  }
  if (too_small)
    throw_shape_error(op, "input " + format_shape(input.sizes()) + " padded to " + format_shape(padded) +
                              " is smaller than the dilated kernel " + format_shape(eff) + " (kernel " + format_shape(k) +
                              ", dilation " + format_shape(d) + "), so the output would be empty",
                      "use a smaller kernel or dilation, or more padding");
  ConvShape cs{batched ? input.size(0) : 1, C, Cout, groups, {}};
  const size_t h = spatial - 1;  // conv1d: height 1
  cs.g = ConvGeometry{expect / groups, spatial == 2 ? in_sp[0] : 1, in_sp[h], spatial == 2 ? k[0] : 1, k[h],
                      spatial == 2 ? s[0] : 1, s[h], spatial == 2 ? p[0] : 0, p[h], spatial == 2 ? d[0] : 1, d[h]};
  cs.g.finish();
  return cs;
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride, const Shape& padding,
              const Shape& dilation, int64_t groups) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&input, &weight, &bias}); ac)
    return conv2d(ac[0], ac[1], ac[2], stride, padding, dilation, groups);
  OpGuard guard("conv2d", input, weight, bias);
  const ConvShape s = check_conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2);
  if (input.dim() == 3) return squeeze(conv_core(s, unsqueeze(input, 0), weight, bias), 0);
  return conv_core(s, input, weight, bias);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  if (amp::detail::AutocastCall ac(amp::detail::CastPolicy::LowerPrecision, {&input, &weight, &bias}); ac)
    return conv1d(ac[0], ac[1], ac[2], stride, padding, dilation, groups);
  OpGuard guard("conv1d", input, weight, bias);
  const ConvShape s = check_conv("conv1d", input, weight, bias, {stride}, {padding}, {dilation}, groups, 1);
  const Tensor in4 = input.dim() == 2 ? unsqueeze(unsqueeze(input, 0), 2) : unsqueeze(input, 2);
  const Tensor out = squeeze(conv_core(s, in4, unsqueeze(weight, 2), bias), 2);
  return input.dim() == 2 ? squeeze(out, 0) : out;
}

}  // namespace rt
