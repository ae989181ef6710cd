// Fused optimizer steps on CUDA parameters (see engine/src/ops/dispatch_stubs.h).
#include "../../kernels/cuda/optimizer_step.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"

namespace rt::cuda::ops {
namespace {

void adam_step(const Tensor& param, const Tensor& exp_avg, const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq,
               const Tensor& grad, const cuda_kernels::AdamStepParams& params) {
  detail::DeviceGuard guard(param.device().index);
  const cuda_kernels::TensorArg vmax = max_exp_avg_sq.defined() ? detail::arg(max_exp_avg_sq) : cuda_kernels::TensorArg{};
  cuda_kernels::adam_step(detail::arg(param), detail::arg(exp_avg), detail::arg(exp_avg_sq),
                          max_exp_avg_sq.defined() ? &vmax : nullptr, detail::arg(grad), params,
                          detail::stream_of(param.device()));
}

void sgd_step(const Tensor& param, const Tensor& momentum_buffer, const Tensor& grad,
              const cuda_kernels::SgdStepParams& params) {
  detail::DeviceGuard guard(param.device().index);
  const cuda_kernels::TensorArg buf = momentum_buffer.defined() ? detail::arg(momentum_buffer) : cuda_kernels::TensorArg{};
  cuda_kernels::sgd_step(detail::arg(param), momentum_buffer.defined() ? &buf : nullptr, detail::arg(grad), params,
                         detail::stream_of(param.device()));
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::adam_step, DeviceType::CUDA, adam_step);
RT_REGISTER_KERNEL(dispatch::sgd_step, DeviceType::CUDA, sgd_step);

}  // namespace rt::cuda::ops
