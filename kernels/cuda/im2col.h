// kernels/cuda/im2col.h — unfolding NCHW images into GEMM columns for conv2d on CUDA, and back.
//
//   rt::cpu::ConvGeometry g{.C = Cin / groups, .H = H, .W = W, .kH = 3, .kW = 3, .pH = 1, .pW = 1};
//   g.finish();                                      // oH, oW
//   // cols: [N, C*kH*kW, oH*oW]; forward per group = gemm_batched(out_g [N, Cout/groups, L], W_g (batch stride 0), cols)
//   rt::cuda_kernels::im2col(cols, input_group_view, g, stream);
//   // grad_input: cols = W_g^T @ grad_out_g (gemm_batched), then
//   rt::cuda_kernels::col2im(grad_input_group_view, cols, g, stream);
//   // grad_weight: cols side by side as [C*kH*kW, N*L] (pass the 3-D view [N, CKK, L] with strides
//   // {L, N*L, 1}), grad_out likewise as [Cout, N*L]; grad_w = grad_out @ cols^T in one gemm.
//
// The geometry and the column layout are the CPU engine's (kernels/cpu/im2col.h): row
// (c, i, j) = (c * kH + i) * kW + j, column (oh, ow) = oh * oW + ow, input position
// ih = oh * sH - pH + i * dH, iw = ow * sW - pW + j * dW; padded positions read as zero.
// Tensors are strided views, so groups need no copies: a group's input is the channel slice
// [N, C, H, W] of the [N, Cin, H, W] tensor, and its columns are any [N, C*kH*kW, oH*oW] view.
//   img: 4-D [N, g.C, g.H, g.W], any strides.   col: 3-D [N, g.C*kH*kW, g.oH*g.oW], any strides.
// Both of one floating dtype (float16, bfloat16, float32, float64).
// im2col writes every entry of col. col2im writes (does not add to) every entry of img: each
// image element gathers the column entries read from it in ascending (i, j) order, starting
// from zero, the order in which the CPU's col2im adds them into a zeroed image, so float32 and
// float64 sums equal the CPU's bit for bit; half types accumulate in float and round once.
// No atomics: results are deterministic.
// Errors: DTypeError (dtype), ShapeError (sizes that do not match g, an empty output),
// ValueError (stride or dilation < 1, padding < 0, g.finish() not called).
#pragma once
#include "cpu/im2col.h"  // rt::cpu::ConvGeometry, shared with the CPU engine
#include "cuda/tensor_arg.h"

namespace rt::cuda_kernels {

void im2col(const TensorArg& col, const TensorArg& img, const cpu::ConvGeometry& g, cudaStream_t stream);
void col2im(const TensorArg& img, const TensorArg& col, const cpu::ConvGeometry& g, cudaStream_t stream);

}  // namespace rt::cuda_kernels
