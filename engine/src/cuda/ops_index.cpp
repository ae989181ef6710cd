// Indexing ops on CUDA tensors (see engine/src/ops/dispatch_stubs.h).

#include "../../kernels/cuda/device_error_flag.h"
#include "../../kernels/cuda/index.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "ops/dispatch_stubs.h"

namespace rt::cuda::ops {

namespace {

void scatter_into(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                  cuda_kernels::ScatterIndex mode) {
  detail::DeviceGuard guard(out.device().index);
  const auto o = detail::arg(out);
  Tensor scratch = detail::scratch(out.device(), cuda_kernels::scatter_add_scratch_bytes(o));
  cuda_kernels::scatter_add(o, detail::arg(src), detail::arg(index), int(dim), mode, scratch.device_data(),
                            detail::stream_of(out.device()));
}

void index_select(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index) {
  detail::DeviceGuard guard(out.device().index);
  Tensor flag = detail::scratch(out.device(), cuda_kernels::kDeviceErrorFlagBytes);
  cuda_kernels::index_select(detail::arg(out), detail::arg(t), detail::arg(index), int(dim), flag.device_data(),
                             detail::stream_of(out.device()));
}

void gather(const Tensor& out, const Tensor& t, int64_t dim, const Tensor& index) {
  detail::DeviceGuard guard(out.device().index);
  Tensor flag = detail::scratch(out.device(), cuda_kernels::kDeviceErrorFlagBytes);
  cuda_kernels::gather(detail::arg(out), detail::arg(t), detail::arg(index), int(dim), flag.device_data(),
                       detail::stream_of(out.device()));
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_into(out, dim, index, src, cuda_kernels::ScatterIndex::PerElement);
}

void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_into(out, dim, index, src, cuda_kernels::ScatterIndex::AlongDim);
}

}  // namespace

RT_REGISTER_KERNEL(dispatch::index_select, DeviceType::CUDA, index_select);
RT_REGISTER_KERNEL(dispatch::gather, DeviceType::CUDA, gather);
RT_REGISTER_KERNEL(dispatch::scatter_add, DeviceType::CUDA, scatter_add);
RT_REGISTER_KERNEL(dispatch::index_add, DeviceType::CUDA, index_add);

}  // namespace rt::cuda::ops
