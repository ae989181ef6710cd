// max_pool2d, avg_pool2d, adaptive_avg_pool2d over [N, C, H, W] or [C, H, W], with backward.
// Each (n, c) plane is independent: planes run in parallel, each one serially, so results
// (gradients included) do not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "dispatch_stubs.h"
#include "device_copy.h"
#include "cpu/loops.h"
#include "cpu/onednn/pooling.h"
#include "onednn_scratch.h"
#include "rt/backends.h"
#include "rt/autograd/node.h"
#include "rt/op_observer.h"
#include "rt/ops/linalg.h"

namespace rt {
namespace {

struct PoolShape {
  int64_t planes = 0, H = 0, W = 0, oH = 0, oW = 0;
  int64_t kH = 1, kW = 1, sH = 1, sW = 1, pH = 0, pW = 0, dH = 1, dW = 1;
  Shape out_shape;
};

template <typename F>
void for_planes(const PoolShape& s, int64_t work_per_plane, F fn) {
  if (s.planes > 1 && s.planes * work_per_plane >= cpu::kParallelGrain && !omp_in_parallel()) {
    const CancelToken cancel = CancelToken::current();  // the workers poll the caller's request
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < s.planes; ++p)
      if (!cancel.requested()) fn(p);
    check_cancel();
  } else {
    for (int64_t p = 0; p < s.planes; ++p) fn(p);
  }
}

// visit_dtype without bool (max pooling) or restricted to floating types (averages, gradients).
template <typename F>
void visit_ordered(ScalarType t, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) f.template operator()<T>();
  });
}
template <typename F>
void visit_float(ScalarType t, F&& f) {
  visit_dtype(t, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<compute_t<T>>) f.template operator()<T>();
  });
}

Tensor dense(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = make_tensor(t.sizes(), t.dtype(), t.device());
  detail::copy_into(out, t);
  return out;
}

Shape pair(const char* op, const char* what, const Shape& v, int64_t min) {
  if (v.size() != 1 && v.size() != 2)
    throw ValueError(std::string(op) + ": " + what + " must have 1 or 2 values, got " + format_shape(v) + module_context());
  Shape out = v.size() == 1 ? Shape{v[0], v[0]} : v;
  for (int64_t x : out)
    if (x < min)
      throw ValueError(std::string(op) + ": " + what + " must be " + (min == 0 ? "non-negative" : "positive") +
                       ", got " + format_shape(v) + module_context());
  return out;
}

int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  int64_t out = div_floor(in + 2 * pad - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;  // the last window must start inside the input or left padding
  return out;
}

// Checks the input (3-D or 4-D, non-empty planes) and fills planes/H/W/out_shape's leading dims.
PoolShape check_input(const char* op, const Tensor& input, bool floating_only) {
  if (input.dim() != 3 && input.dim() != 4)
    throw_shape_error(op, "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, but got shape " + format_shape(input.sizes()));
  for (int64_t d = input.dim() - 3; d < input.dim(); ++d)
    if (input.size(d) == 0)
      throw_shape_error(op, "expected non-empty channel and spatial dims, but input " + format_shape(input.sizes()) +
                                " has size 0 at dimension " + std::to_string(d));
  if (input.dtype() == kBool || (floating_only && !is_floating(input.dtype())))
    throw DTypeError(std::string(op) + ": dtype is not supported: " + std::string(dtype_name(input.dtype())) +
                     module_context() + ". Hint: convert the input with .to(rt::kFloat32)");
  PoolShape s;
  s.H = input.size(-2);
  s.W = input.size(-1);
  s.planes = input.numel() / (s.H * s.W);
  s.out_shape = Shape(input.sizes().begin(), input.sizes().end() - 2);
  return s;
}

void set_window(const char* op, PoolShape& s, const Tensor& input, const Shape& kernel_size, const Shape& stride,
                const Shape& padding, const Shape& dilation, bool ceil_mode) {
  const Shape k = pair(op, "kernel_size", kernel_size, 1);
  const Shape st = stride.empty() ? k : pair(op, "stride", stride, 1);
  const Shape p = pair(op, "padding", padding, 0), d = pair(op, "dilation", dilation, 1);
  if (p[0] > k[0] / 2 || p[1] > k[1] / 2)
    throw_shape_error(op, "padding " + format_shape(p) + " should be at most half of the kernel size " + format_shape(k),
                      "use a larger kernel_size or less padding");
  s.kH = k[0], s.kW = k[1], s.sH = st[0], s.sW = st[1], s.pH = p[0], s.pW = p[1], s.dH = d[0], s.dW = d[1];
  s.oH = pooled_size(s.H, s.kH, s.pH, s.sH, s.dH, ceil_mode);
  s.oW = pooled_size(s.W, s.kW, s.pW, s.sW, s.dW, ceil_mode);
  if (s.oH < 1 || s.oW < 1)
    throw_shape_error(op, "output size [" + std::to_string(s.oH) + ", " + std::to_string(s.oW) + "] is too small: input " +
                              format_shape(input.sizes()) + " with padding " + format_shape(p) + " is smaller than the " +
                              "dilated kernel [" + std::to_string(s.dH * (s.kH - 1) + 1) + ", " +
                              std::to_string(s.dW * (s.kW - 1) + 1) + "]",
                      "use a smaller kernel_size or more padding");
  s.out_shape.push_back(s.oH);
  s.out_shape.push_back(s.oW);
}

// avg_pool2d's window of output (oh, ow), clipped to the input, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};
AvgWindow avg_window(const PoolShape& s, int64_t oh, int64_t ow, bool count_include_pad) {
  int64_t h0 = oh * s.sH - s.pH, w0 = ow * s.sW - s.pW;
  int64_t h1 = std::min(h0 + s.kH, s.H + s.pH), w1 = std::min(w0 + s.kW, s.W + s.pW);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, s.H), w1 = std::min(w1, s.W);
  return {h0, h1, w0, w1, count_include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

dispatch::PoolWindow window_of(const PoolShape& s) { return {s.kH, s.kW, s.sH, s.sW, s.pH, s.pW, s.dH, s.dW}; }

// Pooling on a GPU: one kernel each way (kernels/cuda/pooling.h).
Tensor max_pool2d_cuda(const PoolShape& s, const Tensor& input) {
  if (!is_floating(input.dtype()))
    throw DTypeError("max_pool2d on CUDA: expected a floating point input, got " + std::string(dtype_name(input.dtype())) +
                     module_context());
  const Tensor in = input.contiguous();
  Tensor out = make_tensor(s.out_shape, input.dtype(), input.device());
  Tensor indices = make_tensor(s.out_shape, kInt64, input.device());
  dispatch::max_pool2d(out.device(), out, indices, in, window_of(s));
  if (autograd::any_requires_grad(input))
    autograd::record("MaxPool2DWithIndicesBackward0", {input}, {out}, [s, indices, shape = input.sizes()](const TensorList& g) {
      OpGuard guard("max_pool2d_with_indices_backward", g[0]);
      Tensor gin = make_tensor(shape, g[0].dtype(), g[0].device());
      dispatch::max_pool2d_backward(g[0].device(), gin, g[0].contiguous(), indices, window_of(s));
      return TensorList{gin};
    });
  return out;
}

Tensor avg_pool2d_cuda(const PoolShape& s, const Tensor& input, bool count_include_pad) {
  Tensor out = make_tensor(s.out_shape, input.dtype(), input.device());
  dispatch::avg_pool2d(out.device(), out, input.contiguous(), window_of(s), count_include_pad);
  if (autograd::any_requires_grad(input))
    autograd::record("AvgPool2DBackward0", {input}, {out}, [s, count_include_pad, shape = input.sizes()](const TensorList& g) {
      OpGuard guard("avg_pool2d_backward", g[0]);
      Tensor gin = make_tensor(shape, g[0].dtype(), g[0].device());
      dispatch::avg_pool2d_backward(g[0].device(), gin, g[0].contiguous(), window_of(s), count_include_pad);
      return TensorList{gin};
    });
  return out;
}

Tensor adaptive_avg_pool2d_cuda(const PoolShape& s, const Tensor& input) {
  Tensor out = make_tensor(s.out_shape, input.dtype(), input.device());
  dispatch::adaptive_avg_pool2d(out.device(), out, input.contiguous());
  if (autograd::any_requires_grad(input))
    autograd::record("AdaptiveAvgPool2DBackward0", {input}, {out}, [shape = input.sizes()](const TensorList& g) {
      OpGuard guard("_adaptive_avg_pool2d_backward", g[0]);
      Tensor gin = make_tensor(shape, g[0].dtype(), g[0].device());
      dispatch::adaptive_avg_pool2d_backward(g[0].device(), gin, g[0].contiguous());
      return TensorList{gin};
    });
  return out;
}

// The outputs ow of one row whose window column j reads inside the input: [lo, hi).
struct ColumnRange {
  int64_t lo, hi;
};
ColumnRange valid_columns(const PoolShape& s, int64_t j) {
  const int64_t off = j * s.dW - s.pW;  // iw = ow * sW + off
  const int64_t lo = off >= 0 ? 0 : (-off + s.sW - 1) / s.sW;
  const int64_t hi = s.W - off <= 0 ? 0 : std::min(s.oW, (s.W - off - 1) / s.sW + 1);
  return {lo, std::max(lo, hi)};
}

// max_pool2d of one plane: every output keeps the first maximum of its window in (i, j) order, a NaN
// once seen (as PyTorch), and its index ih * W + iw (-1 for a window wholly in the padding). Window rows
// outer, output columns inner: each input row is read in order and nothing is bounds-checked per element.
template <typename T>
void max_pool_plane(const PoolShape& s, const T* plane, T* out, int64_t* idx) {
  using C = compute_t<T>;
  const int64_t W = s.W, sW = s.sW, oW = s.oW;  // locals: the stores to idx could alias s's fields
  std::vector<C> best_row(static_cast<size_t>(oW));
  C* best = best_row.data();
  for (int64_t oh = 0; oh < s.oH; ++oh) {
    int64_t* arg = idx + oh * oW;
    std::fill(best, best + oW, std::numeric_limits<C>::lowest());
    std::fill(arg, arg + oW, int64_t(-1));
    for (int64_t i = 0; i < s.kH; ++i) {
      const int64_t ih = oh * s.sH - s.pH + i * s.dH;
      if (ih < 0 || ih >= s.H) continue;
      const T* row = plane + ih * W;
      for (int64_t j = 0; j < s.kW; ++j) {
        const int64_t off = j * s.dW - s.pW;
        const auto [lo, hi] = valid_columns(s, j);
        const int64_t base = ih * W + off;
        // Selects, not branches (simd makes the compiler if-convert): with random data a branch on
        // `take` mispredicts half the time.
#pragma omp simd
        for (int64_t ow = lo; ow < hi; ++ow) {
          const C v = C(row[ow * sW + off]), b = best[ow];
          const int64_t a = arg[ow];
          bool take = (a < 0) | (v > b);
          if constexpr (std::is_floating_point_v<C>) take = take | (v != v);  // NaN
          best[ow] = take ? v : b;
          arg[ow] = take ? base + ow * sW : a;
        }
      }
    }
    for (int64_t ow = 0; ow < oW; ++ow) out[oh * oW + ow] = T(best[ow]);
  }
}

// avg_pool2d through oneDNN (float32 while rt::backends::mkldnn is enabled: 4-7x faster than the loops
// below on the benchmarks' shapes, docs/cpu-convolutions.md), or nullopt for the loops. The planes are
// oneDNN's channels. A profile shows mkldnn_avg_pool2d(_backward) nested in the op when it ran.
template <typename Plan>
std::optional<Plan> onednn_avg_pool(const PoolShape& s, bool count_include_pad, ScalarType dtype) {
  if (!backends::mkldnn::enabled()) return std::nullopt;
  return Plan::plan({.N = 1, .C = s.planes, .H = s.H, .W = s.W, .oH = s.oH, .oW = s.oW, .kH = s.kH, .kW = s.kW,
                     .sH = s.sH, .sW = s.sW, .pH = s.pH, .pW = s.pW, .count_include_pad = count_include_pad,
                     .dtype = dtype});
}

int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

}  // namespace

Tensor max_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  const Shape& dilation, bool ceil_mode) {
  OpGuard guard("max_pool2d", input);
  PoolShape s = check_input("max_pool2d", input, false);
  set_window("max_pool2d", s, input, kernel_size, stride, padding, dilation, ceil_mode);
  if (!input.is_cpu()) return max_pool2d_cuda(s, input);
  const Tensor in = dense(input);
  Tensor out = make_tensor(s.out_shape, input.dtype()), indices = make_tensor(s.out_shape, kInt64);
  visit_ordered(input.dtype(), [&]<typename T>() {
    const T* pi = static_cast<const T*>(in.raw_data());
    T* po = static_cast<T*>(out.raw_data());
    int64_t* px = indices.data_ptr<int64_t>();
    for_planes(s, s.oH * s.oW * s.kH * s.kW, [&](int64_t p) {
      max_pool_plane<T>(s, pi + p * s.H * s.W, po + p * s.oH * s.oW, px + p * s.oH * s.oW);
    });
  });
  if (autograd::any_requires_grad(input))
    autograd::record("MaxPool2DWithIndicesBackward0", {input}, {out}, [s, indices, shape = input.sizes()](const TensorList& g) {
      OpGuard guard("max_pool2d_with_indices_backward", g[0]);
      const Tensor go = dense(g[0]);
      Tensor gin = make_tensor(shape, go.dtype());
      visit_float(go.dtype(), [&]<typename T>() {
        using C = compute_t<T>;
        const T* pg = static_cast<const T*>(go.raw_data());
        const int64_t* px = indices.data_ptr<int64_t>();
        T* pd = static_cast<T*>(gin.raw_data());
        for_planes(s, s.oH * s.oW, [&](int64_t p) {
          std::vector<C> acc(size_t(s.H * s.W), C(0));
          for (int64_t o = p * s.oH * s.oW; o < (p + 1) * s.oH * s.oW; ++o)
            if (px[o] >= 0) acc[size_t(px[o])] += C(pg[o]);
          for (int64_t i = 0; i < s.H * s.W; ++i) pd[p * s.H * s.W + i] = T(acc[size_t(i)]);
        });
      });
      return TensorList{gin};
    });
  return out;
}

Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad) {
  OpGuard guard("avg_pool2d", input);
  PoolShape s = check_input("avg_pool2d", input, true);
  set_window("avg_pool2d", s, input, kernel_size, stride, padding, {1}, ceil_mode);
  if (!input.is_cpu()) return avg_pool2d_cuda(s, input, count_include_pad);
  const Tensor in = dense(input);
  Tensor out = make_tensor(s.out_shape, input.dtype());
  if (auto pool = onednn_avg_pool<cpu::onednn::AvgPoolForward>(s, count_include_pad, input.dtype())) {
    OpGuard path("mkldnn_avg_pool2d", in);
    TensorScratch scratch;
    pool->run(in.raw_data(), out.raw_data(), scratch);
  } else visit_float(input.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* pi = static_cast<const T*>(in.raw_data());
    T* po = static_cast<T*>(out.raw_data());
    for_planes(s, s.oH * s.oW * s.kH * s.kW, [&](int64_t p) {
      const T* plane = pi + p * s.H * s.W;
      for (int64_t oh = 0; oh < s.oH; ++oh)
        for (int64_t ow = 0; ow < s.oW; ++ow) {
          const AvgWindow w = avg_window(s, oh, ow, count_include_pad);
          C sum = 0;
          for (int64_t ih = w.h0; ih < w.h1; ++ih)
            for (int64_t iw = w.w0; iw < w.w1; ++iw) sum += C(plane[ih * s.W + iw]);
          po[(p * s.oH + oh) * s.oW + ow] = T(w.h0 >= w.h1 || w.w0 >= w.w1 ? C(0) : sum / C(w.divisor));
        }
    });
  });
  if (autograd::any_requires_grad(input))
    autograd::record("AvgPool2DBackward0", {input}, {out}, [s, count_include_pad, shape = input.sizes()](const TensorList& g) {
      OpGuard guard("avg_pool2d_backward", g[0]);
      const Tensor go = dense(g[0]);
      Tensor gin = make_tensor(shape, go.dtype());
      if (auto pool = onednn_avg_pool<cpu::onednn::AvgPoolBackward>(s, count_include_pad, go.dtype())) {
        OpGuard path("mkldnn_avg_pool2d_backward", go);
        TensorScratch scratch;
        pool->run(go.raw_data(), gin.raw_data(), scratch);
        return TensorList{gin};
      }
      visit_float(go.dtype(), [&]<typename T>() {
        using C = compute_t<T>;
        const T* pg = static_cast<const T*>(go.raw_data());
        T* pd = static_cast<T*>(gin.raw_data());
        for_planes(s, s.oH * s.oW * s.kH * s.kW, [&](int64_t p) {
          std::vector<C> acc(size_t(s.H * s.W), C(0));
          for (int64_t oh = 0; oh < s.oH; ++oh)
            for (int64_t ow = 0; ow < s.oW; ++ow) {
              const AvgWindow w = avg_window(s, oh, ow, count_include_pad);
              if (w.h0 >= w.h1 || w.w0 >= w.w1) continue;
              const C v = C(pg[(p * s.oH + oh) * s.oW + ow]) / C(w.divisor);
              for (int64_t ih = w.h0; ih < w.h1; ++ih)
                for (int64_t iw = w.w0; iw < w.w1; ++iw) acc[size_t(ih * s.W + iw)] += v;
            }
          for (int64_t i = 0; i < s.H * s.W; ++i) pd[p * s.H * s.W + i] = T(acc[size_t(i)]);
        });
      });
      return TensorList{gin};
    });
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size) {
  OpGuard guard("adaptive_avg_pool2d", input);
  PoolShape s = check_input("adaptive_avg_pool2d", input, true);
  const Shape o = pair("adaptive_avg_pool2d", "output_size", output_size, 0);
  s.oH = o[0], s.oW = o[1];
  s.out_shape.push_back(s.oH);
  s.out_shape.push_back(s.oW);
  if (!input.is_cpu()) return adaptive_avg_pool2d_cuda(s, input);
  const Tensor in = dense(input);
  Tensor out = make_tensor(s.out_shape, input.dtype());
  const int64_t work = std::max<int64_t>(s.H * s.W, s.oH * s.oW);
  visit_float(input.dtype(), [&]<typename T>() {
    using C = compute_t<T>;
    const T* pi = static_cast<const T*>(in.raw_data());
    T* po = static_cast<T*>(out.raw_data());
    for_planes(s, work, [&](int64_t p) {
      const T* plane = pi + p * s.H * s.W;
      for (int64_t oh = 0; oh < s.oH; ++oh) {
        const int64_t h0 = adaptive_start(oh, s.H, s.oH), h1 = adaptive_end(oh, s.H, s.oH);
        for (int64_t ow = 0; ow < s.oW; ++ow) {
          const int64_t w0 = adaptive_start(ow, s.W, s.oW), w1 = adaptive_end(ow, s.W, s.oW);
          C sum = 0;
          for (int64_t ih = h0; ih < h1; ++ih)
            for (int64_t iw = w0; iw < w1; ++iw) sum += C(plane[ih * s.W + iw]);
          po[(p * s.oH + oh) * s.oW + ow] = T(sum / C((h1 - h0) * (w1 - w0)));
        }
      }
    });
  });
  if (autograd::any_requires_grad(input))
    autograd::record("AdaptiveAvgPool2DBackward0", {input}, {out}, [s, work, shape = input.sizes()](const TensorList& g) {
      OpGuard guard("_adaptive_avg_pool2d_backward", g[0]);
      const Tensor go = dense(g[0]);
      Tensor gin = make_tensor(shape, go.dtype());
      visit_float(go.dtype(), [&]<typename T>() {
        using C = compute_t<T>;
        const T* pg = static_cast<const T*>(go.raw_data());
        T* pd = static_cast<T*>(gin.raw_data());
        for_planes(s, work, [&](int64_t p) {
          std::vector<C> acc(size_t(s.H * s.W), C(0));
          for (int64_t oh = 0; oh < s.oH; ++oh) {
            const int64_t h0 = adaptive_start(oh, s.H, s.oH), h1 = adaptive_end(oh, s.H, s.oH);
            for (int64_t ow = 0; ow < s.oW; ++ow) {
              const int64_t w0 = adaptive_start(ow, s.W, s.oW), w1 = adaptive_end(ow, s.W, s.oW);
              const C v = C(pg[(p * s.oH + oh) * s.oW + ow]) / C((h1 - h0) * (w1 - w0));
              for (int64_t ih = h0; ih < h1; ++ih)
                for (int64_t iw = w0; iw < w1; ++iw) acc[size_t(ih * s.W + iw)] += v;
            }
          }
          for (int64_t i = 0; i < s.H * s.W; ++i) pd[p * s.H * s.W + i] = T(acc[size_t(i)]);
        });
      });
      return TensorList{gin};
    });
  return out;
}

}  // namespace rt
