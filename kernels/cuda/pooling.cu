// max / avg / adaptive-avg pool2d forward and backward. See kernels/cuda/pooling.h.
#include <string>

#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/pooling.h"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

struct Planes {
  int64_t planes = 1, H = 1, W = 1, oH = 1, oW = 1;
};

__host__ __device__ inline int64_t div_floor(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
__host__ __device__ inline int64_t div_ceil(int64_t a, int64_t b) { return -div_floor(-a, b); }

struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

__device__ inline AvgWindow avg_window(const Planes& P, const PoolWindow& k, int64_t oh, int64_t ow, bool include_pad) {
  int64_t h0 = oh * k.sH - k.pH, w0 = ow * k.sW - k.pW;
  int64_t h1 = min(h0 + k.kH, P.H + k.pH), w1 = min(w0 + k.kW, P.W + k.pW);
  const int64_t padded = (h1 - h0) * (w1 - w0);
  h0 = max(h0, int64_t(0)), w0 = max(w0, int64_t(0));
  h1 = min(h1, P.H), w1 = min(w1, P.W);
  return {h0, h1, w0, w1, include_pad ? padded : (h1 - h0) * (w1 - w0)};
}

__device__ inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
__device__ inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// Outputs o (along one dim) whose window [o * s - p, o * s - p + span) can contain input i.
__device__ inline void covering(int64_t i, int64_t s, int64_t p, int64_t span, int64_t n_out, int64_t& lo, int64_t& hi) {
  lo = max(int64_t(0), div_ceil(i + p - span + 1, s));
  hi = min(n_out - 1, div_floor(i + p, s));
}

// numeric_limits<C>::lowest(), which is host-only.
template <typename C>
__device__ inline C lowest() { return sizeof(C) == sizeof(double) ? C(-1.7976931348623157e308) : C(-3.40282347e38f); }

#define RT_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <typename T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t* __restrict__ idx, Planes P,
                                PoolWindow k) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(o, P.planes * P.oH * P.oW) {
    const int64_t ow = o % P.oW, oh = (o / P.oW) % P.oH, p = o / (P.oW * P.oH);
    const T* plane = x + p * P.H * P.W;
    C best = 0;
    int64_t arg = -1;
    for (int64_t i = 0; i < k.kH; ++i) {
      const int64_t ih = oh * k.sH - k.pH + i * k.dH;
      if (ih < 0 || ih >= P.H) continue;
      for (int64_t j = 0; j < k.kW; ++j) {
        const int64_t iw = ow * k.sW - k.pW + j * k.dW;
        if (iw < 0 || iw >= P.W) continue;
        const C v = to_acc(plane[ih * P.W + iw]);
        if (arg < 0 || v > best || v != v) best = v, arg = ih * P.W + iw;
      }
    }
    y[o] = from_acc<T>(arg < 0 ? lowest<C>() : best);  // an all-padding window, as the CPU
    idx[o] = arg;
  }
}

template <typename T>
__global__ void max_pool_backward_kernel(const T* __restrict__ g, const int64_t* __restrict__ idx, T* __restrict__ gx,
                                         Planes P, PoolWindow k) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(e, P.planes * P.H * P.W) {
    const int64_t iw = e % P.W, ih = (e / P.W) % P.H, p = e / (P.W * P.H);
    int64_t oh0, oh1, ow0, ow1;
    covering(ih, k.sH, k.pH, (k.kH - 1) * k.dH + 1, P.oH, oh0, oh1);
    covering(iw, k.sW, k.pW, (k.kW - 1) * k.dW + 1, P.oW, ow0, ow1);
    const int64_t here = ih * P.W + iw, base = p * P.oH * P.oW;
    C acc = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh)
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const int64_t o = base + oh * P.oW + ow;
        if (idx[o] == here) acc += to_acc(g[o]);
      }
    gx[e] = from_acc<T>(acc);
  }
}

template <typename T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, Planes P, PoolWindow k, bool include_pad) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(o, P.planes * P.oH * P.oW) {
    const int64_t ow = o % P.oW, oh = (o / P.oW) % P.oH, p = o / (P.oW * P.oH);
    const T* plane = x + p * P.H * P.W;
    const AvgWindow w = avg_window(P, k, oh, ow, include_pad);
    C sum = 0;
    for (int64_t ih = w.h0; ih < w.h1; ++ih)
      for (int64_t iw = w.w0; iw < w.w1; ++iw) sum += to_acc(plane[ih * P.W + iw]);
    y[o] = from_acc<T>(w.h0 >= w.h1 || w.w0 >= w.w1 ? C(0) : sum / C(w.divisor));
  }
}

template <typename T>
__global__ void avg_pool_backward_kernel(const T* __restrict__ g, T* __restrict__ gx, Planes P, PoolWindow k,
                                         bool include_pad) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(e, P.planes * P.H * P.W) {
    const int64_t iw = e % P.W, ih = (e / P.W) % P.H, p = e / (P.W * P.H);
    int64_t oh0, oh1, ow0, ow1;
    covering(ih, k.sH, k.pH, k.kH, P.oH, oh0, oh1);
    covering(iw, k.sW, k.pW, k.kW, P.oW, ow0, ow1);
    C acc = 0;
    for (int64_t oh = oh0; oh <= oh1; ++oh)
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const AvgWindow w = avg_window(P, k, oh, ow, include_pad);
        if (ih < w.h0 || ih >= w.h1 || iw < w.w0 || iw >= w.w1) continue;
        acc += to_acc(g[(p * P.oH + oh) * P.oW + ow]) / C(w.divisor);
      }
    gx[e] = from_acc<T>(acc);
  }
}

template <typename T>
__global__ void adaptive_avg_kernel(const T* __restrict__ x, T* __restrict__ y, Planes P) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(o, P.planes * P.oH * P.oW) {
    const int64_t ow = o % P.oW, oh = (o / P.oW) % P.oH, p = o / (P.oW * P.oH);
    const int64_t h0 = adaptive_start(oh, P.H, P.oH), h1 = adaptive_end(oh, P.H, P.oH);
    const int64_t w0 = adaptive_start(ow, P.W, P.oW), w1 = adaptive_end(ow, P.W, P.oW);
    const T* plane = x + p * P.H * P.W;
    C sum = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) sum += to_acc(plane[ih * P.W + iw]);
    y[o] = from_acc<T>(sum / C((h1 - h0) * (w1 - w0)));
  }
}

template <typename T>
__global__ void adaptive_avg_backward_kernel(const T* __restrict__ g, T* __restrict__ gx, Planes P) {
  using C = acc_t<T>;
  RT_GRID_STRIDE(e, P.planes * P.H * P.W) {
    const int64_t iw = e % P.W, ih = (e / P.W) % P.H, p = e / (P.W * P.H);
    C acc = 0;
    // The outputs whose windows hold ih lie in [floor(ih * oH / H) - 1, floor((ih + 1) * oH / H)].
    const int64_t oh_lo = max(int64_t(0), (ih * P.oH) / P.H - 1), oh_hi = min(P.oH - 1, ((ih + 1) * P.oH) / P.H + 1);
    const int64_t ow_lo = max(int64_t(0), (iw * P.oW) / P.W - 1), ow_hi = min(P.oW - 1, ((iw + 1) * P.oW) / P.W + 1);
    for (int64_t oh = oh_lo; oh <= oh_hi; ++oh) {
      const int64_t h0 = adaptive_start(oh, P.H, P.oH), h1 = adaptive_end(oh, P.H, P.oH);
      if (ih < h0 || ih >= h1) continue;
      for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
        const int64_t w0 = adaptive_start(ow, P.W, P.oW), w1 = adaptive_end(ow, P.W, P.oW);
        if (iw < w0 || iw >= w1) continue;
        acc += to_acc(g[(p * P.oH + oh) * P.oW + ow]) / C((h1 - h0) * (w1 - w0));
      }
    }
    gx[e] = from_acc<T>(acc);
  }
}

#undef RT_GRID_STRIDE

Planes planes_of(const TensorArg& in, const TensorArg& out, const char* op) {
  require_contiguous(in, op, "input");
  require_contiguous(out, op, "output");
  if (in.ndim < 2 || out.ndim != in.ndim)
    throw ShapeError(std::string(op) + " on CUDA: input and output must have the same rank >= 2 ([..., H, W])");
  Planes P;
  for (int d = 0; d < in.ndim - 2; ++d) {
    if (in.sizes[d] != out.sizes[d])
      throw ShapeError(std::string(op) + " on CUDA: input and output differ in dim " + std::to_string(d));
    P.planes *= in.sizes[d];
  }
  P.H = in.sizes[in.ndim - 2], P.W = in.sizes[in.ndim - 1];
  P.oH = out.sizes[out.ndim - 2], P.oW = out.sizes[out.ndim - 1];
  return P;
}

void check_window(const PoolWindow& k, const char* op) {
  if (k.kH < 1 || k.kW < 1 || k.sH < 1 || k.sW < 1 || k.dH < 1 || k.dW < 1 || k.pH < 0 || k.pW < 0)
    throw ValueError(std::string(op) + " on CUDA: kernel, stride and dilation must be positive and padding non-negative");
}

}  // namespace

void max_pool2d_forward(const TensorArg& out, const TensorArg& indices, const TensorArg& input, const PoolWindow& w,
                        cudaStream_t stream) {
  const char* op = "max_pool2d";
  check_window(w, op);
  const Planes P = planes_of(input, out, op);
  require_dtype(out, input.dtype, op, "output");
  require_contiguous(indices, op, "indices");
  require_dtype(indices, kInt64, op, "indices");
  if (indices.numel() != out.numel()) throw ShapeError("max_pool2d on CUDA: indices must match the output's shape");
  if (out.numel() == 0) return;
  visit_floating(input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(out.numel()), kBlock, stream, max_pool_kernel<T>)(
        static_cast<const T*>(input.data), static_cast<T*>(out.data), static_cast<int64_t*>(indices.data), P, w);
    check_launch(op);
  });
}

void max_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, const TensorArg& indices,
                         const PoolWindow& w, cudaStream_t stream) {
  const char* op = "max_pool2d_backward";
  check_window(w, op);
  const Planes P = planes_of(grad_input, grad_out, op);
  require_dtype(grad_out, grad_input.dtype, op, "grad_output");
  require_contiguous(indices, op, "indices");
  require_dtype(indices, kInt64, op, "indices");
  if (grad_input.numel() == 0) return;
  visit_floating(grad_input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(grad_input.numel()), kBlock, stream, max_pool_backward_kernel<T>)(
        static_cast<const T*>(grad_out.data), static_cast<const int64_t*>(indices.data),
        static_cast<T*>(grad_input.data), P, w);
    check_launch(op);
  });
}

void avg_pool2d_forward(const TensorArg& out, const TensorArg& input, const PoolWindow& w, bool count_include_pad,
                        cudaStream_t stream) {
  const char* op = "avg_pool2d";
  check_window(w, op);
  const Planes P = planes_of(input, out, op);
  require_dtype(out, input.dtype, op, "output");
  if (out.numel() == 0) return;
  visit_floating(input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(out.numel()), kBlock, stream, avg_pool_kernel<T>)(static_cast<const T*>(input.data),
                                                                     static_cast<T*>(out.data), P, w, count_include_pad);
    check_launch(op);
  });
}

void avg_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, const PoolWindow& w,
                         bool count_include_pad, cudaStream_t stream) {
  const char* op = "avg_pool2d_backward";
  check_window(w, op);
  const Planes P = planes_of(grad_input, grad_out, op);
  require_dtype(grad_out, grad_input.dtype, op, "grad_output");
  if (grad_input.numel() == 0) return;
  visit_floating(grad_input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(grad_input.numel()), kBlock, stream, avg_pool_backward_kernel<T>)(
        static_cast<const T*>(grad_out.data), static_cast<T*>(grad_input.data), P, w, count_include_pad);
    check_launch(op);
  });
}

void adaptive_avg_pool2d_forward(const TensorArg& out, const TensorArg& input, cudaStream_t stream) {
  const char* op = "adaptive_avg_pool2d";
  const Planes P = planes_of(input, out, op);
  require_dtype(out, input.dtype, op, "output");
  if (out.numel() == 0) return;
  if (P.H == 0 || P.W == 0) throw ShapeError("adaptive_avg_pool2d on CUDA: input planes must not be empty");
  visit_floating(input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(out.numel()), kBlock, stream, adaptive_avg_kernel<T>)(static_cast<const T*>(input.data),
                                                                         static_cast<T*>(out.data), P);
    check_launch(op);
  });
}

void adaptive_avg_pool2d_backward(const TensorArg& grad_input, const TensorArg& grad_out, cudaStream_t stream) {
  const char* op = "adaptive_avg_pool2d_backward";
  const Planes P = planes_of(grad_input, grad_out, op);
  require_dtype(grad_out, grad_input.dtype, op, "grad_output");
  if (grad_input.numel() == 0) return;
  if (P.oH == 0 || P.oW == 0) {
    check_cuda(cudaMemsetAsync(grad_input.data, 0, size_t(grad_input.numel()) * element_size(grad_input.dtype), stream), op);
    return;
  }
  visit_floating(grad_input.dtype, op, [&]<typename T>() {
    RT_LAUNCH(grid_for(grad_input.numel()), kBlock, stream, adaptive_avg_backward_kernel<T>)(
        static_cast<const T*>(grad_out.data), static_cast<T*>(grad_input.data), P);
    check_launch(op);
  });
}

}  // namespace rt::cuda_kernels
