// The CUDA runtime side of rt/cuda.h: devices, synchronisation, TF32 (streams and events: streams.cpp).
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <string>

#include "../../kernels/cuda/gemm.h"
#include "../../kernels/cuda/launch.h"
#include "cuda/backend.h"
#include "cuda/device_state.h"
#include "rt/cuda.h"
#include "rt/error.h"

namespace rt::cuda {
namespace {

struct Probe {
  int count = 0;
  std::string reason;
};

// Asked once per process: the driver's answer does not change while we run.
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error so later calls start clean
      r.reason = std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) + " (" +
                 cudaGetErrorString(e) + "); check that an NVIDIA GPU and its driver are present (nvidia-smi)";
    } else if (n == 0) {
      r.reason = "no CUDA device: the driver reports none; check nvidia-smi and CUDA_VISIBLE_DEVICES";
    }
    r.count = e == cudaSuccess ? n : 0;
#ifdef RT_CUDA_EMULATED
    if (r.count == 0)
      r.reason += ". This build runs the CUDA kernels on the CPU emulator, for tests (kernels/cuda_emulator/): "
                  "RT_CUDA_EMULATED_DEVICES=1 gives it one emulated device; a GPU machine builds them with nvcc";
#endif
    return r;
  }();
  return p;
}

}  // namespace

bool is_built() { return true; }
int device_count() { return probe().count; }
bool is_available() { return probe().count > 0; }
std::string unavailable_reason() { return probe().reason; }

std::string version_string() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  const bool has_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0;
  std::string s = "CUDA " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + " (runtime)";
  s += has_driver ? ", driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10)
                  : ", no driver";
  return s;
}

int current_device() {
  detail::require_available("current_device");
  int d = 0;
  cuda_kernels::check_cuda(cudaGetDevice(&d), "cudaGetDevice");
  return d;
}

void set_device(int device) {
  cuda_kernels::check_cuda(cudaSetDevice(detail::checked_index(device, "set_device")), "cudaSetDevice");
}

DeviceProperties device_properties(int device) {
  const int d = detail::checked_index(device, "device_properties");
  cudaDeviceProp p{};
  cuda_kernels::check_cuda(cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
  return {p.name, p.major, p.minor, p.totalGlobalMem, p.multiProcessorCount};
}

void synchronize(int device) {
  const int d = detail::checked_index(device, "synchronize");
  detail::DeviceGuard guard(d);
  cuda_kernels::check_cuda(cudaDeviceSynchronize(), "synchronize");
}

std::pair<size_t, size_t> mem_get_info(int device) {
  detail::DeviceGuard guard(detail::checked_index(device, "mem_get_info"));
  size_t free = 0, total = 0;
  cuda_kernels::check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return {free, total};
}

void set_allow_tf32(bool allow) { cuda_kernels::set_allow_tf32(allow); }

namespace {
// cuBLAS workspaces (kernels/cuda/gemm.cpp) retry an out-of-memory allocation after this.
[[maybe_unused]] const bool g_workspace_release_registered = (cuda_kernels::set_release_cached_memory(&empty_cache), true);
}  // namespace
bool allow_tf32() { return cuda_kernels::allow_tf32(); }

}  // namespace rt::cuda
