// conv2d and pooling on CUDA tensors: im2col + cuBLAS per group, col2im for the input gradient
// (see engine/src/ops/dispatch_stubs.h). Views carry the group slices, so nothing is copied per group.
#include "../../kernels/cuda/gemm.h"
#include "../../kernels/cuda/im2col.h"
#include "../../kernels/cuda/pooling.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"
#include "rt/ops/view.h"

namespace rt::cuda::ops {
using dispatch::BinaryOp;
using dispatch::ReduceOp;
using dispatch::PoolWindow;
namespace {

Tensor view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  return make_view(base, std::move(sizes), std::move(strides), base.storage_offset() + offset);
}

void conv2d(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias,
            const cpu::ConvGeometry& g, int64_t groups) {
  detail::DeviceGuard guard(out.device().index);
  const auto s = detail::stream_of(out.device());
  const int64_t N = input.size(0), Cin = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t Cout = out.size(1), cog = Cout / groups, CKK = g.col_rows(), L = g.col_cols();
  Tensor cols = make_tensor({N, CKK, L}, input.dtype(), input.device());
  for (int64_t grp = 0; grp < groups; ++grp) {
    const Tensor img = view(input, {N, g.C, H, W}, {Cin * H * W, H * W, W, 1}, grp * g.C * H * W);
    cuda_kernels::im2col(detail::arg(cols), detail::arg(img), g, s);
    const Tensor w = view(weight, {N, cog, CKK}, {0, CKK, 1}, grp * cog * CKK);
    const Tensor o = view(out, {N, cog, L}, {Cout * L, L, 1}, grp * cog * L);
    cuda_kernels::gemm_batched(detail::arg(o), detail::arg(w), detail::arg(cols), false, false, 1.0, 0.0, s);
  }
  if (bias.defined())
    dispatch::binary(out.device(), BinaryOp::Add, out, out, view(bias, {N, Cout, g.oH, g.oW}, {0, 1, 0, 0}, 0), 1.0);
}

void conv2d_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                     const Tensor& grad_out, const Tensor& input, const Tensor& weight, const cpu::ConvGeometry& g,
                     int64_t groups) {
  detail::DeviceGuard guard(grad_out.device().index);
  const auto s = detail::stream_of(grad_out.device());
  const int64_t N = input.size(0), Cin = input.size(1), H = input.size(2), W = input.size(3);
  const int64_t Cout = grad_out.size(1), cog = Cout / groups, CKK = g.col_rows(), L = g.col_cols();
  if (grad_input.defined()) {
    Tensor cols = make_tensor({N, CKK, L}, grad_out.dtype(), grad_out.device());
    for (int64_t grp = 0; grp < groups; ++grp) {
      const Tensor wt = view(weight, {N, CKK, cog}, {0, 1, CKK}, grp * cog * CKK);  // W_g^T, read in place
      const Tensor go = view(grad_out, {N, cog, L}, {Cout * L, L, 1}, grp * cog * L);
      cuda_kernels::gemm_batched(detail::arg(cols), detail::arg(wt), detail::arg(go), false, false, 1.0, 0.0, s);
      const Tensor gi = view(grad_input, {N, g.C, H, W}, {Cin * H * W, H * W, W, 1}, grp * g.C * H * W);
      cuda_kernels::col2im(detail::arg(gi), detail::arg(cols), g, s);
    }
  }
  if (grad_weight.defined()) {
    // Columns of every image side by side ([CKK, N*L]) and grad_out as [Cout, N*L]: one GEMM per group.
    Tensor cols = make_tensor({CKK, N * L}, input.dtype(), input.device());
    const Tensor go = rt::permute(grad_out.view({N, Cout, L}), {1, 0, 2}).contiguous();  // [Cout, N, L]
    for (int64_t grp = 0; grp < groups; ++grp) {
      const Tensor img = view(input, {N, g.C, H, W}, {Cin * H * W, H * W, W, 1}, grp * g.C * H * W);
      cuda_kernels::im2col(detail::arg(view(cols, {N, CKK, L}, {L, N * L, 1}, 0)), detail::arg(img), g, s);
      const Tensor gw = view(grad_weight, {cog, CKK}, {CKK, 1}, grp * cog * CKK);
      const Tensor gog = view(go, {cog, N * L}, {N * L, 1}, grp * cog * N * L);
      const Tensor cols_t = view(cols, {N * L, CKK}, {1, N * L}, 0);
      cuda_kernels::gemm(detail::arg(gw), detail::arg(gog), detail::arg(cols_t), false, false, 1.0, 0.0, s);
    }
  }
  if (grad_bias.defined()) dispatch::reduce(grad_out.device(), ReduceOp::Sum, grad_bias, grad_out, 0b1101u, 0);
}

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& input, const PoolWindow& w) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::max_pool2d_forward(detail::arg(out), detail::arg(indices), detail::arg(input), w,
                                   detail::stream_of(out.device()));
}

void max_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& indices, const PoolWindow& w) {
  detail::DeviceGuard guard(grad_input.device().index);
  cuda_kernels::max_pool2d_backward(detail::arg(grad_input), detail::arg(grad_out), detail::arg(indices), w,
                                    detail::stream_of(grad_input.device()));
}

void avg_pool2d(const Tensor& out, const Tensor& input, const PoolWindow& w, bool count_include_pad) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::avg_pool2d_forward(detail::arg(out), detail::arg(input), w, count_include_pad,
                                   detail::stream_of(out.device()));
}

void avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out, const PoolWindow& w, bool count_include_pad) {
  detail::DeviceGuard guard(grad_input.device().index);
  cuda_kernels::avg_pool2d_backward(detail::arg(grad_input), detail::arg(grad_out), w, count_include_pad,
                                    detail::stream_of(grad_input.device()));
}

void adaptive_avg_pool2d(const Tensor& out, const Tensor& input) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::adaptive_avg_pool2d_forward(detail::arg(out), detail::arg(input), detail::stream_of(out.device()));
}

void adaptive_avg_pool2d_backward(const Tensor& grad_input, const Tensor& grad_out) {
  detail::DeviceGuard guard(grad_input.device().index);
  cuda_kernels::adaptive_avg_pool2d_backward(detail::arg(grad_input), detail::arg(grad_out),
                                             detail::stream_of(grad_input.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::conv2d, DeviceType::CUDA, conv2d);
RT_REGISTER_KERNEL(dispatch::conv2d_backward, DeviceType::CUDA, conv2d_backward);
RT_REGISTER_KERNEL(dispatch::max_pool2d, DeviceType::CUDA, max_pool2d);
RT_REGISTER_KERNEL(dispatch::max_pool2d_backward, DeviceType::CUDA, max_pool2d_backward);
RT_REGISTER_KERNEL(dispatch::avg_pool2d, DeviceType::CUDA, avg_pool2d);
RT_REGISTER_KERNEL(dispatch::avg_pool2d_backward, DeviceType::CUDA, avg_pool2d_backward);
RT_REGISTER_KERNEL(dispatch::adaptive_avg_pool2d, DeviceType::CUDA, adaptive_avg_pool2d);
RT_REGISTER_KERNEL(dispatch::adaptive_avg_pool2d_backward, DeviceType::CUDA, adaptive_avg_pool2d_backward);

}  // namespace rt::cuda::ops
