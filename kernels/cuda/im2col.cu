// im2col / col2im launchers: see im2col.h. One thread per (image, channel, output pixel) for
// im2col, writing its kH * kW column entries; one thread per image element for col2im,
// gathering. Index arithmetic runs in 32 bits when every offset fits (the common case: 64-bit
// division is several times slower on the GPU), in 64 bits otherwise.
#include <climits>
#include <cstdint>
#include <string>

#include "cuda/im2col.h"
#include "cuda/launch.h"
#include "cuda/nn_dtype.cuh"
#include "cuda/kernel_macros.cuh"

namespace rt::cuda_kernels {
namespace {

// The geometry and strides a kernel needs, in index type I.
template <typename I>
struct Im2colArgs {
  I N, C, H, W, kH, kW, sH, sW, pH, pW, dH, dW, oH, oW;
  I is[4];  // img strides (elements): n, c, h, w
  I cs[3];  // col strides: n, row, column
};

template <typename T, typename I>
__global__ void im2col_kernel(T* __restrict__ col, const T* __restrict__ img, Im2colArgs<I> a, I total) {
  for (I idx = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); idx < total; idx += I(gridDim.x) * I(blockDim.x)) {
    I r = idx;
    const I ow = r % a.oW;
    r /= a.oW;
    const I oh = r % a.oH;
    r /= a.oH;
    const I c = r % a.C;
    const I n = r / a.C;
    const T* src = img + n * a.is[0] + c * a.is[1];
    T* dst = col + n * a.cs[0] + c * a.kH * a.kW * a.cs[1] + (oh * a.oW + ow) * a.cs[2];
    const I h0 = oh * a.sH - a.pH, w0 = ow * a.sW - a.pW;
    for (I i = 0; i < a.kH; ++i) {
      const I ih = h0 + i * a.dH;
      const bool row_in = ih >= 0 && ih < a.H;
      for (I j = 0; j < a.kW; ++j) {
        const I iw = w0 + j * a.dW;
        *dst = row_in && iw >= 0 && iw < a.W ? src[ih * a.is[2] + iw * a.is[3]] : from_acc<T>(0.0f);
        dst += a.cs[1];
      }
    }
  }
}

// img[n, c, ih, iw] = sum over (i, j) ascending of col[n, (c, i, j), (oh, ow)] for every (oh, ow)
// that reads (ih, iw): ih + pH - i * dH = oh * sH with 0 <= oh < oH, likewise for columns.
template <typename T, typename I>
__global__ void col2im_kernel(T* __restrict__ img, const T* __restrict__ col, Im2colArgs<I> a, I total) {
  using A = acc_t<T>;
  for (I idx = I(blockIdx.x) * I(blockDim.x) + I(threadIdx.x); idx < total; idx += I(gridDim.x) * I(blockDim.x)) {
    I r = idx;
    const I iw = r % a.W;
    r /= a.W;
    const I ih = r % a.H;
    r /= a.H;
    const I c = r % a.C;
    const I n = r / a.C;
    const T* base = col + n * a.cs[0] + c * a.kH * a.kW * a.cs[1];
    A acc = A(0);
    for (I i = 0; i < a.kH; ++i) {
      const I h = ih + a.pH - i * a.dH;
      if (h < 0) break;  // h only decreases with i
      if (h % a.sH != 0 || h / a.sH >= a.oH) continue;
      const I oh = h / a.sH;
      for (I j = 0; j < a.kW; ++j) {
        const I w = iw + a.pW - j * a.dW;
        if (w < 0) break;
        if (w % a.sW != 0 || w / a.sW >= a.oW) continue;
        acc += to_acc(base[(i * a.kW + j) * a.cs[1] + (oh * a.oW + w / a.sW) * a.cs[2]]);
      }
    }
    img[n * a.is[0] + c * a.is[1] + ih * a.is[2] + iw * a.is[3]] = from_acc<T>(acc);
  }
}

std::string sizes_str(const TensorArg& t) {
  std::string s = "[";
  for (int d = 0; d < t.ndim; ++d) s += (d ? ", " : "") + std::to_string(t.sizes[d]);
  return s + "]";
}

// Checks g and the shapes of img and col against it; returns N.
int64_t check_geometry(const char* op, const TensorArg& img, const TensorArg& col, const cpu::ConvGeometry& g) {
  if (g.sH < 1 || g.sW < 1 || g.dH < 1 || g.dW < 1 || g.pH < 0 || g.pW < 0 || g.kH < 1 || g.kW < 1 || g.C < 1)
    throw ValueError(std::string(op) + " on CUDA: invalid geometry (stride and dilation must be >= 1, padding >= 0, "
                     "kernel and channels >= 1)");
  cpu::ConvGeometry want = g;
  want.finish();
  if (g.oH != want.oH || g.oW != want.oW)
    throw ValueError(std::string(op) + " on CUDA: the geometry's output size (" + std::to_string(g.oH) + " x " +
                     std::to_string(g.oW) + ") is not the one its input, kernel, stride, padding and dilation give (" +
                     std::to_string(want.oH) + " x " + std::to_string(want.oW) + "); call g.finish() first");
  if (g.oH < 1 || g.oW < 1)
    throw ShapeError(std::string(op) + " on CUDA: the output would be empty (" + std::to_string(g.oH) + " x " +
                     std::to_string(g.oW) + "); the padded input is smaller than the dilated kernel");
  if (img.ndim != 4 || img.sizes[1] != g.C || img.sizes[2] != g.H || img.sizes[3] != g.W)
    throw ShapeError(std::string(op) + " on CUDA: expected the image to be [N, " + std::to_string(g.C) + ", " +
                     std::to_string(g.H) + ", " + std::to_string(g.W) + "], got " + sizes_str(img));
  const int64_t N = img.sizes[0];
  if (col.ndim != 3 || col.sizes[0] != N || col.sizes[1] != g.col_rows() || col.sizes[2] != g.col_cols())
    throw ShapeError(std::string(op) + " on CUDA: expected the columns to be [" + std::to_string(N) + ", " +
                     std::to_string(g.col_rows()) + ", " + std::to_string(g.col_cols()) + "] (N, C*kH*kW, oH*oW), got " +
                     sizes_str(col));
  if (img.dtype != col.dtype)
    throw DTypeError(std::string(op) + " on CUDA: image and columns must share one dtype, got " +
                     std::string(dtype_name(img.dtype)) + " and " + std::string(dtype_name(col.dtype)));
  return N;
}

// Largest element offset (plus one) a strided view can address, with negative strides rejected.
int64_t extent(const TensorArg& t) {
  int64_t e = 1;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.strides[d] < 0) return INT64_MAX;
    e += (t.sizes[d] - 1) * t.strides[d];
  }
  return e;
}

template <typename I>
Im2colArgs<I> make_args(const TensorArg& img, const TensorArg& col, const cpu::ConvGeometry& g) {
  Im2colArgs<I> a{I(img.sizes[0]), I(g.C), I(g.H), I(g.W), I(g.kH), I(g.kW), I(g.sH), I(g.sW), I(g.pH), I(g.pW),
                  I(g.dH), I(g.dW), I(g.oH), I(g.oW), {}, {}};
  for (int d = 0; d < 4; ++d) a.is[d] = I(img.strides[d]);
  for (int d = 0; d < 3; ++d) a.cs[d] = I(col.strides[d]);
  return a;
}

// Runs launch<I>() with I = int32_t when every index, offset and coordinate fits, int64_t otherwise.
template <typename F>
void with_index_type(const TensorArg& img, const TensorArg& col, const cpu::ConvGeometry& g, F&& launch) {
  const int64_t lim = INT32_MAX / 2;  // headroom for intermediate sums of coordinates and offsets
  const bool small = extent(img) < lim && extent(col) < lim && col.numel() < lim && img.numel() < lim &&
                     g.H + 2 * g.pH + g.dH * g.kH < lim && g.W + 2 * g.pW + g.dW * g.kW < lim;
  if (small) launch.template operator()<int32_t>();
  else launch.template operator()<int64_t>();
}

}  // namespace

void im2col(const TensorArg& col, const TensorArg& img, const cpu::ConvGeometry& g, cudaStream_t stream) {
  const int64_t N = check_geometry("im2col", img, col, g);
  visit_floating(img.dtype, "im2col", [&]<typename T>() {
    const int64_t total = N * g.C * g.oH * g.oW;
    if (total == 0) return;
    with_index_type(img, col, g, [&]<typename I>() {
      RT_LAUNCH(grid_for(total), kBlock, stream, im2col_kernel<T, I>)(
          static_cast<T*>(col.data), static_cast<const T*>(img.data),
                                                                 make_args<I>(img, col, g), I(total));
      check_launch("im2col");
    });
  });
}

void col2im(const TensorArg& img, const TensorArg& col, const cpu::ConvGeometry& g, cudaStream_t stream) {
  const int64_t N = check_geometry("col2im", img, col, g);
  visit_floating(img.dtype, "col2im", [&]<typename T>() {
    const int64_t total = N * g.C * g.H * g.W;
    if (total == 0) return;
    with_index_type(img, col, g, [&]<typename I>() {
      RT_LAUNCH(grid_for(total), kBlock, stream, col2im_kernel<T, I>)(
          static_cast<T*>(img.data), static_cast<const T*>(col.data),
                                                                 make_args<I>(img, col, g), I(total));
      check_launch("col2im");
    });
  });
}

}  // namespace rt::cuda_kernels
