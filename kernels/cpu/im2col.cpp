#include "im2col.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "loops.h"

namespace rt::cpu {
namespace {

// Output columns [lo, hi) whose input column ow * s + off falls inside [0, size).
void valid_range(int64_t off, int64_t s, int64_t size, int64_t out, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + s - 1) / s;
  hi = off > size - 1 ? 0 : (size - 1 - off) / s + 1;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

// Runs fn(c) for every channel, in parallel when the work is large and we are not already
// inside a parallel region (each channel touches only its own rows and image plane).
template <typename F>
void for_channels(const ConvGeometry& g, F fn) {
  if (g.C > 1 && g.col_rows() * g.col_cols() >= kParallelGrain && !omp_in_parallel()) {
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < g.C; ++c) fn(c);
  } else {
    for (int64_t c = 0; c < g.C; ++c) fn(c);
  }
}

}  // namespace

template <typename T>
void im2col(const T* img, const ConvGeometry& g, T* col, int64_t ld) {
  const int64_t L = ld > 0 ? ld : g.col_cols();
  for_channels(g, [&](int64_t c) {
    for (int64_t i = 0; i < g.kH; ++i)
      for (int64_t j = 0; j < g.kW; ++j) {
        T* dst = col + ((c * g.kH + i) * g.kW + j) * L;
        const int64_t off = j * g.dW - g.pW;
        int64_t lo, hi;
        valid_range(off, g.sW, g.W, g.oW, lo, hi);
        for (int64_t oh = 0; oh < g.oH; ++oh) {
          T* d = dst + oh * g.oW;
          const int64_t ih = oh * g.sH - g.pH + i * g.dH;
          if (ih < 0 || ih >= g.H) {
            std::fill(d, d + g.oW, T(0));
            continue;
          }
          const T* src = img + (c * g.H + ih) * g.W;
          std::fill(d, d + lo, T(0));
          if (g.sW == 1) {
            if (hi > lo) std::memcpy(d + lo, src + lo + off, size_t(hi - lo) * sizeof(T));
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) d[ow] = src[ow * g.sW + off];
          }
          std::fill(d + hi, d + g.oW, T(0));
        }
      }
  });
}

template <typename T>
void col2im(const T* col, const ConvGeometry& g, T* img) {
  const int64_t L = g.col_cols();
  for_channels(g, [&](int64_t c) {
    for (int64_t i = 0; i < g.kH; ++i)
      for (int64_t j = 0; j < g.kW; ++j) {
        const T* s = col + ((c * g.kH + i) * g.kW + j) * L;
        const int64_t off = j * g.dW - g.pW;
        int64_t lo, hi;
        valid_range(off, g.sW, g.W, g.oW, lo, hi);
        for (int64_t oh = 0; oh < g.oH; ++oh) {
          const int64_t ih = oh * g.sH - g.pH + i * g.dH;
          if (ih < 0 || ih >= g.H) continue;
          T* dst = img + (c * g.H + ih) * g.W;
          const T* r = s + oh * g.oW;
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow * g.sW + off] += r[ow];
        }
      }
  });
}

template void im2col<float>(const float*, const ConvGeometry&, float*, int64_t);
template void im2col<double>(const double*, const ConvGeometry&, double*, int64_t);
template void col2im<float>(const float*, const ConvGeometry&, float*);
template void col2im<double>(const double*, const ConvGeometry&, double*);

}  // namespace rt::cpu
