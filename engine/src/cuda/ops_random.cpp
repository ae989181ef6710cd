// Random fills, dropout and embedding on CUDA tensors (see engine/src/ops/dispatch_stubs.h).
#include "../../kernels/cuda/device_error_flag.h"
#include "../../kernels/cuda/dropout.h"
#include "../../kernels/cuda/embedding.h"
#include "../../kernels/cuda/random_fill.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"
#include "rt/generator.h"

namespace rt::cuda::ops {
namespace {

void random_fill(const Tensor& t, bool normal, double a, double b) {
  if (t.numel() == 0) return;
  detail::DeviceGuard guard(t.device().index);
  Generator& gen = default_generator();
  const uint64_t offset = gen.reserve(cuda_kernels::random_fill_counters(t.numel(), t.dtype()));
  const auto s = detail::stream_of(t.device());
  if (normal) cuda_kernels::fill_normal(detail::arg(t), a, b, gen.seed(), offset, s);
  else cuda_kernels::fill_uniform(detail::arg(t), a, b, gen.seed(), offset, s);
}

void dropout(const Tensor& out, const Tensor& mask, const Tensor& x, double p) {
  detail::DeviceGuard guard(out.device().index);
  Generator& gen = default_generator();
  const uint64_t offset = gen.reserve(cuda_kernels::dropout_counters(x.numel(), x.dtype()));
  cuda_kernels::dropout_forward(detail::arg(out), detail::arg(mask), detail::arg(x), p, gen.seed(), offset,
                                detail::stream_of(out.device()));
}

void dropout_backward(const Tensor& grad_input, const Tensor& grad_out, const Tensor& mask, double scale) {
  detail::DeviceGuard guard(grad_input.device().index);
  cuda_kernels::dropout_backward(detail::arg(grad_input), detail::arg(grad_out), detail::arg(mask), scale,
                                 detail::stream_of(grad_input.device()));
}

void embedding(const Tensor& out, const Tensor& weight, const Tensor& indices) {
  detail::DeviceGuard guard(out.device().index);
  Tensor flag = detail::scratch(out.device(), cuda_kernels::kDeviceErrorFlagBytes);
  cuda_kernels::embedding_forward(detail::arg(out), detail::arg(weight), detail::arg(indices), flag.device_data(),
                                  detail::stream_of(out.device()));
}

void embedding_backward(const Tensor& grad_weight, const Tensor& grad_out, const Tensor& indices, int64_t padding_idx) {
  detail::DeviceGuard guard(grad_weight.device().index);
  const auto gw = detail::arg(grad_weight);
  Tensor scratch = detail::scratch(grad_weight.device(), cuda_kernels::embedding_backward_scratch_bytes(gw));
  cuda_kernels::embedding_backward(gw, detail::arg(grad_out), detail::arg(indices), padding_idx,
                                   scratch.defined() ? scratch.device_data() : nullptr,
                                   detail::stream_of(grad_weight.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::random_fill, DeviceType::CUDA, random_fill);
RT_REGISTER_KERNEL(dispatch::dropout, DeviceType::CUDA, dropout);
RT_REGISTER_KERNEL(dispatch::dropout_backward, DeviceType::CUDA, dropout_backward);
RT_REGISTER_KERNEL(dispatch::embedding, DeviceType::CUDA, embedding);
RT_REGISTER_KERNEL(dispatch::embedding_backward, DeviceType::CUDA, embedding_backward);

}  // namespace rt::cuda::ops
