// kernels/cpu/im2col.h — unfolding images into GEMM columns for convolution, and back.
//
//   rt::cpu::ConvGeometry g{.C = 3, .H = 32, .W = 32, .kH = 3, .kW = 3, .pH = 1, .pW = 1};
//   g.finish();                                  // oH = oW = 32
//   std::vector<float> col(g.col_rows() * g.col_cols());
//   rt::cpu::im2col(image, g, col.data());       // conv = weight[Cout, C*kH*kW] @ col
//
// Column layout: row (c, i, j) = (c * kH + i) * kW + j, column (oh, ow) = oh * oW + ow; padded
// positions read as zero. col2im is the adjoint: it adds every column entry back into the
// image position it was read from (so the image must be zeroed first).
#pragma once
#include <cstdint>

#include "rt/export.h"

RT_API_BEGIN

namespace rt::cpu {

struct ConvGeometry {
  int64_t C = 1, H = 1, W = 1;     // input channels (of one group) and size
  int64_t kH = 1, kW = 1;          // kernel
  int64_t sH = 1, sW = 1;          // stride
  int64_t pH = 0, pW = 0;          // zero padding
  int64_t dH = 1, dW = 1;          // dilation
  int64_t oH = 0, oW = 0;          // output size, set by finish()

  void finish() {
    oH = (H + 2 * pH - dH * (kH - 1) - 1) / sH + 1;
    oW = (W + 2 * pW - dW * (kW - 1) - 1) / sW + 1;
  }
  int64_t col_rows() const { return C * kH * kW; }
  int64_t col_cols() const { return oH * oW; }
  // A 1x1 kernel with unit stride and no padding: the image already is its column matrix.
  bool is_pointwise() const { return kH == 1 && kW == 1 && sH == 1 && sW == 1 && pH == 0 && pW == 0; }
};

// img: contiguous [C, H, W]; col: [C*kH*kW, oH*oW] with rows ld apart (ld = 0: oH*oW, dense).
// A larger ld lets several images share one column matrix side by side. float and double.
template <typename T> void im2col(const T* img, const ConvGeometry& g, T* col, int64_t ld = 0);
template <typename T> void col2im(const T* col, const ConvGeometry& g, T* img);

}  // namespace rt::cpu

RT_API_END
