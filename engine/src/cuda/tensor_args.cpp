#include "cuda/tensor_args.h"

#include "cuda/backend.h"
#include "rt/error.h"

namespace rt::cuda::detail {

cuda_kernels::TensorArg arg(const Tensor& t) {
  if (t.dim() > cuda_kernels::kMaxDims)
    throw NotImplementedError("CUDA kernels take tensors of at most " + std::to_string(cuda_kernels::kMaxDims) +
                              " dimensions, got shape " + format_shape(t.sizes()) + "; reshape it first");
  cuda_kernels::TensorArg a;
  a.data = t.device_data();
  a.dtype = t.dtype();
  a.ndim = int(t.dim());
  for (int i = 0; i < a.ndim; ++i) {
    a.sizes[i] = t.sizes()[size_t(i)];
    a.strides[i] = t.strides()[size_t(i)];
  }
  return a;
}

Tensor scratch(Device device, size_t bytes) {
  if (bytes == 0) return {};
  return make_tensor({int64_t(bytes)}, kUInt8, device);
}

cudaStream_t stream_of(Device d) { return static_cast<cudaStream_t>(stream(d)); }

}  // namespace rt::cuda::detail
