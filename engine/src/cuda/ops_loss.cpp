// cross_entropy and nll_loss on CUDA tensors (see engine/src/ops/dispatch_stubs.h).
#include "../../kernels/cuda/cross_entropy.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"

namespace rt::cuda::ops {
using dispatch::ClassLossArgs;
namespace {
cuda_kernels::TensorArg optional_arg(const Tensor& t) { return t.defined() ? detail::arg(t) : cuda_kernels::TensorArg{}; }

void class_loss(const Tensor& out, const ClassLossArgs& a) {
  detail::DeviceGuard guard(out.device().index);
  const size_t bytes = cuda_kernels::cross_entropy_scratch_bytes(a.target.numel());
  Tensor scratch = detail::scratch(out.device(), bytes);
  cuda_kernels::cross_entropy_forward(detail::arg(out), optional_arg(a.lse), detail::arg(a.total_weight), detail::arg(a.x),
                                      detail::arg(a.target), optional_arg(a.weight), a.ignore_index, a.reduction,
                                      a.label_smoothing, a.logits, scratch.defined() ? scratch.device_data() : nullptr,
                                      detail::stream_of(out.device()));
}

void class_loss_backward(const Tensor& grad_input, const Tensor& grad_out, const ClassLossArgs& a) {
  detail::DeviceGuard guard(grad_input.device().index);
  cuda_kernels::cross_entropy_backward(detail::arg(grad_input), detail::arg(grad_out), detail::arg(a.x),
                                       detail::arg(a.target), optional_arg(a.weight), optional_arg(a.lse),
                                       detail::arg(a.total_weight), a.ignore_index, a.reduction, a.label_smoothing,
                                       a.logits, detail::stream_of(grad_input.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::class_loss, DeviceType::CUDA, class_loss);
RT_REGISTER_KERNEL(dispatch::class_loss_backward, DeviceType::CUDA, class_loss_backward);

}  // namespace rt::cuda::ops
