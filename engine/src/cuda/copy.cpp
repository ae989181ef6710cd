// Copies between devices (Tensor::to, copy_, and every op's copy_into that touches a GPU).
// Host <-> device transfers move contiguous bytes of one dtype with cudaMemcpyAsync on the
// current stream and wait for it (synchronous, so host memory may be reused at once), except a
// non_blocking copy from pinned memory, which is only queued. Conversions and strided layouts
// happen on whichever side already holds the data: on the device with the copy kernel, on the
// host with the CPU one.
#include <cuda_runtime.h>

#include "ops/cpu_view.h"
#include "../../kernels/cuda/copy.h"
#include "../../kernels/cuda/launch.h"
#include "cuda/backend.h"
#include "cuda/device_state.h"
#include "cuda/tensor_args.h"
#include "rt/autograd/grad_mode.h"
#include "rt/cuda.h"
#include "rt/error.h"
#include "rt/ops/view.h"

namespace rt::cuda::detail {
namespace {

// A contiguous tensor on `device` holding src's values in `dtype` (src itself when it already is).
Tensor dense_on_same_device(const Tensor& src, ScalarType dtype) {
  if (src.dtype() == dtype && src.is_contiguous()) return src;
  Tensor out = make_tensor(src.sizes(), dtype, src.device());
  if (src.device().is_cpu()) {
    cpu::copy_kernel(cpu_view(out), cpu_view(src));
  } else {
    DeviceGuard guard(src.device().index);
    cuda_kernels::copy(arg(out), arg(src), stream_of(src.device()));
  }
  return out;
}

// On the device's current stream, after the work queued there (a plain cudaMemcpy would run on
// the legacy stream, which does not wait for non-blocking streams); returns once it is done.
void memcpy_bytes(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, Device device, const char* what) {
  if (bytes == 0) return;
  const cudaStream_t s = stream_of(device);
  cuda_kernels::check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, s), what);
  cuda_kernels::check_cuda(cudaStreamSynchronize(s), what);
}

}  // namespace

void copy(const Tensor& dst, const Tensor& src_in, bool non_blocking) {
  if (dst.numel() == 0) return;
  // copy_ broadcasts its source (x[1:3] = row, x.copy_(scalar)); every path below moves dst.nbytes().
  Tensor src = src_in;
  if (src.sizes() != dst.sizes()) {
    NoGradGuard no_grad;
    src = rt::expand(src, dst.sizes());
  }
  const Device dd = dst.device(), sd = src.device();
  if (non_blocking && dd.is_cuda() && is_pinned(src) && src.dtype() == dst.dtype() && src.is_contiguous() &&
      dst.is_contiguous()) {
    // Straight from page-locked memory: queued on the stream, no wait (torch's non_blocking=True).
    DeviceGuard guard(dd.index);
    const cudaStream_t s = stream_of(dd);
    cuda_kernels::check_cuda(cudaMemcpyAsync(dst.device_data(), src.raw_data(), dst.nbytes(), cudaMemcpyHostToDevice, s),
                             "host-to-device copy (non_blocking, from pinned memory)");
    record_pinned_use(src, dd, s);
    return;
  }
  if (dd.is_cuda() && sd.is_cuda() && dd == sd) {
    DeviceGuard guard(dd.index);
    cuda_kernels::copy(arg(dst), arg(src), stream_of(dd));
    return;
  }
  if (dd.is_cuda() && sd.is_cpu()) {
    // Convert on the host (cheap there, and halves the bytes for float32 -> float16), then one transfer.
    Tensor host = dense_on_same_device(src, dst.dtype());
    DeviceGuard guard(dd.index);
    if (dst.is_contiguous()) {
      memcpy_bytes(dst.device_data(), host.raw_data(), dst.nbytes(), cudaMemcpyHostToDevice, dd, "host-to-device copy");
    } else {
      Tensor staged = make_tensor(dst.sizes(), dst.dtype(), dd);
      memcpy_bytes(staged.device_data(), host.raw_data(), dst.nbytes(), cudaMemcpyHostToDevice, dd, "host-to-device copy");
      cuda_kernels::copy(arg(dst), arg(staged), stream_of(dd));
    }
    return;
  }
  if (dd.is_cpu() && sd.is_cuda()) {
    Tensor device_dense;
    {
      DeviceGuard guard(sd.index);
      device_dense = dense_on_same_device(src, dst.dtype());
      if (dst.is_contiguous()) {
        memcpy_bytes(dst.raw_data(), device_dense.device_data(), dst.nbytes(), cudaMemcpyDeviceToHost, sd, "device-to-host copy");
        return;
      }
    }
    Tensor host = make_tensor(dst.sizes(), dst.dtype());
    {
      DeviceGuard guard(sd.index);
      memcpy_bytes(host.raw_data(), device_dense.device_data(), host.nbytes(), cudaMemcpyDeviceToHost, sd, "device-to-host copy");
    }
    cpu::copy_kernel(cpu_view(dst), cpu_view(host));
    return;
  }
  // Between two GPUs: dense on the source, peer copy, then lay out on the destination.
  Tensor from;
  {
    DeviceGuard guard(sd.index);
    from = dense_on_same_device(src, dst.dtype());
  }
  Tensor to = dst.is_contiguous() ? dst : make_tensor(dst.sizes(), dst.dtype(), dd);
  // `from` is ready once the source's current stream is; the copy runs on the destination's, after
  // its pending work on `to`, and is waited for, since `from` may be reused on the source's stream
  // as soon as this returns.
  {
    DeviceGuard guard(sd.index);
    cuda_kernels::check_cuda(cudaStreamSynchronize(stream_of(sd)), "copy between GPUs (waiting for the source)");
  }
  DeviceGuard guard(dd.index);
  cuda_kernels::check_cuda(
      cudaMemcpyPeerAsync(to.device_data(), dd.index, from.device_data(), sd.index, dst.nbytes(), stream_of(dd)),
      "copy between GPUs");
  if (!to.is_same(dst)) cuda_kernels::copy(arg(dst), arg(to), stream_of(dd));
  cuda_kernels::check_cuda(cudaStreamSynchronize(stream_of(dd)), "copy between GPUs");
}

}  // namespace rt::cuda::detail
