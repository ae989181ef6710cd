// Matrix products (cuBLAS) and softmax on CUDA tensors (see engine/src/ops/dispatch_stubs.h).
#include "../../kernels/cuda/batch_norm.h"
#include "../../kernels/cuda/gemm.h"
#include "../../kernels/cuda/layer_norm.h"
#include "../../kernels/cuda/softmax.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"

#include <algorithm>
#include "ops/dispatch_stubs.h"

namespace rt::cuda::ops {

namespace {

// A matrix operand cuBLAS can read: a unit stride in one of its last two dims, and a leading
// stride that does not overlap rows (an expanded matrix dim has stride 0).
bool blas_readable(const Tensor& t) {
  const int64_t r = t.dim() - 2, c = t.dim() - 1;
  const int64_t rows = t.size(r), cols = t.size(c), sr = t.stride(r), sc = t.stride(c);
  if (sc == 1 || cols == 1) return sr >= std::max<int64_t>(cols, 1) || rows == 1;
  if (sr == 1 || rows == 1) return sc >= std::max<int64_t>(rows, 1) || cols == 1;
  return false;
}

// The batch dims of t ([..., r, c]) folded into one: [B, r, c] as a view, or undefined when
// the strides do not allow one (the caller then copies). Dims of size 1 fold anywhere; the
// others must step by the extent of the dims inside them (all stride 0 when broadcast).
Tensor fold_batch(const Tensor& t) {
  int64_t batch = 1, stride = 0, extent = 0;
  bool first = true;
  for (int64_t d = t.dim() - 3; d >= 0; --d) {
    const int64_t n = t.size(d), st = t.stride(d);
    if (n == 1) continue;
    if (!first && st != extent) return {};
    if (first) stride = st;
    first = false;
    extent = st * n;
    batch *= n;
  }
  return make_view(t, {batch, t.size(-2), t.size(-1)}, {stride, t.stride(-2), t.stride(-1)}, t.storage_offset());
}

cuda_kernels::TensorArg optional_arg(const Tensor& t) { return t.defined() ? detail::arg(t) : cuda_kernels::TensorArg{}; }

Tensor readable(const Tensor& t) { return blas_readable(t) ? t : t.contiguous(); }

void matmul(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  detail::DeviceGuard guard(out.device().index);
  const auto s = detail::stream_of(out.device());
  if (out.dim() == 2)
    return cuda_kernels::gemm(detail::arg(out), detail::arg(readable(a)), detail::arg(readable(b)), false, false, alpha,
                              beta, s);
  Tensor a3 = fold_batch(readable(a)), b3 = fold_batch(readable(b));
  if (!a3.defined()) a3 = fold_batch(a.contiguous());
  if (!b3.defined()) b3 = fold_batch(b.contiguous());
  const Tensor c3 = fold_batch(out);  // out is contiguous: always folds
  cuda_kernels::gemm_batched(detail::arg(c3), detail::arg(a3), detail::arg(b3), false, false, alpha, beta, s);
}

void softmax(const Tensor& out, const Tensor& x, int64_t dim, bool log) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::softmax_forward(detail::arg(out), detail::arg(x), dim, log, detail::stream_of(out.device()));
}

void softmax_backward(const Tensor& grad_in, const Tensor& y, const Tensor& grad, int64_t dim, bool log) {
  detail::DeviceGuard guard(grad_in.device().index);
  cuda_kernels::softmax_backward(detail::arg(grad_in), detail::arg(y), detail::arg(grad), dim, log,
                                 detail::stream_of(grad_in.device()));
}

void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x, const Tensor& weight,
                const Tensor& bias, int64_t D, double eps) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::layer_norm_forward(detail::arg(out), detail::arg(mean), detail::arg(rstd), detail::arg(x),
                                   optional_arg(weight), optional_arg(bias), D, eps, detail::stream_of(out.device()));
}

void layer_norm_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& mean,
                         const Tensor& rstd, int64_t D) {
  detail::DeviceGuard guard(x.device().index);
  const int64_t M = D == 0 ? 0 : x.numel() / D;
  const size_t bytes = grad_weight.defined() || grad_bias.defined()
                           ? cuda_kernels::layer_norm_backward_scratch_bytes(x.dtype(), M, D) : 0;
  Tensor scratch = detail::scratch(x.device(), bytes);
  cuda_kernels::layer_norm_backward(optional_arg(grad_input), optional_arg(grad_weight), optional_arg(grad_bias),
                                    detail::arg(grad_out), detail::arg(x), optional_arg(weight), detail::arg(mean),
                                    detail::arg(rstd), D, scratch.defined() ? scratch.device_data() : nullptr,
                                    detail::stream_of(x.device()));
}

void batch_norm(const Tensor& out, const Tensor& save_mean, const Tensor& save_invstd, const Tensor& x,
                const Tensor& weight, const Tensor& bias, const Tensor& running_mean, const Tensor& running_var,
                bool training, double momentum, double eps) {
  detail::DeviceGuard guard(out.device().index);
  cuda_kernels::batch_norm_forward(detail::arg(out), detail::arg(save_mean), detail::arg(save_invstd), detail::arg(x),
                                   optional_arg(weight), optional_arg(bias), optional_arg(running_mean),
                                   optional_arg(running_var), training, momentum, eps, detail::stream_of(out.device()));
}

void batch_norm_backward(const Tensor& grad_input, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& weight, const Tensor& save_mean,
                         const Tensor& save_invstd, bool training) {
  detail::DeviceGuard guard(x.device().index);
  cuda_kernels::batch_norm_backward(optional_arg(grad_input), optional_arg(grad_weight), optional_arg(grad_bias),
                                    detail::arg(grad_out), detail::arg(x), optional_arg(weight), detail::arg(save_mean),
                                    detail::arg(save_invstd), training, detail::stream_of(x.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::matmul, DeviceType::CUDA, matmul);
RT_REGISTER_KERNEL(dispatch::softmax, DeviceType::CUDA, softmax);
RT_REGISTER_KERNEL(dispatch::softmax_backward, DeviceType::CUDA, softmax_backward);
RT_REGISTER_KERNEL(dispatch::layer_norm, DeviceType::CUDA, layer_norm);
RT_REGISTER_KERNEL(dispatch::layer_norm_backward, DeviceType::CUDA, layer_norm_backward);
RT_REGISTER_KERNEL(dispatch::batch_norm, DeviceType::CUDA, batch_norm);
RT_REGISTER_KERNEL(dispatch::batch_norm_backward, DeviceType::CUDA, batch_norm_backward);

}  // namespace rt::cuda::ops
