#include "optional_parts.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <initializer_list>

#include "rt/cuda.h"

namespace rt::cli {
namespace {

#ifdef RT_WITH_CUPTI
constexpr bool kCuptiBuilt = true;
#else
constexpr bool kCuptiBuilt = false;
#endif
#ifdef RT_WITH_NCCL
constexpr bool kNcclBuilt = true;
#else
constexpr bool kNcclBuilt = false;
#endif
#ifdef RT_WITH_MPI
constexpr bool kMpiBuilt = true;
#else
constexpr bool kMpiBuilt = false;
#endif
#ifdef RT_WITH_GLOO
constexpr bool kGlooBuilt = true;
#else
constexpr bool kGlooBuilt = false;
#endif

struct LoadedLibrary {
  void* handle = nullptr;
  std::string name;
};

// Handles stay open for the life of the process: unloading the CUDA runtime after use is unsafe.
LoadedLibrary load_first(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return {h, name};
  return {};
}

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

void name_devices(GpuProbe& gpu) {
  const LoadedLibrary driver = load_first({"libcuda.so.1", "libcuda.so"});
  if (!driver.handle) return;
  using Init = int (*)(unsigned);
  using DeviceGet = int (*)(int*, int);
  using DeviceGetName = int (*)(char*, int, int);
  using DeviceTotalMem = int (*)(size_t*, int);
  auto init = symbol<Init>(driver.handle, "cuInit");
  auto get = symbol<DeviceGet>(driver.handle, "cuDeviceGet");
  auto get_name = symbol<DeviceGetName>(driver.handle, "cuDeviceGetName");
  auto total_mem = symbol<DeviceTotalMem>(driver.handle, "cuDeviceTotalMem_v2");
  if (!init || !get || !get_name || init(0) != 0) return;
  for (int i = 0; i < gpu.device_count; ++i) {
    int device = 0;
    char name[256] = {};
    if (get(&device, i) != 0 || get_name(name, sizeof(name), device) != 0) continue;
    size_t bytes = 0;
    if (total_mem && total_mem(&bytes, device) == 0)
      gpu.devices.push_back(fmt::format("{} ({:.0f} GiB)", name, double(bytes) / (1ull << 30)));
    else
      gpu.devices.emplace_back(name);
  }
}

// The engine's CUDA version, then its devices' count or why none is usable; a build without CUDA
// also says whether one with it would find a GPU here.
std::string cuda_detail(const CudaBackend& cuda, const GpuProbe& gpu) {
  if (cuda.available) return fmt::format("{}; {} device(s)", cuda.version, cuda.devices.size());
  if (cuda.built) return fmt::format("{}; {}", cuda.version, cuda.reason);
  if (gpu.device_count > 0)
    return fmt::format("{} (this machine has {} GPU(s), driver {})", cuda.reason, gpu.device_count,
                       version_text(gpu.driver_version));
  return fmt::format("{} (and no GPU here: {})", cuda.reason, gpu.error);
}

}  // namespace

GpuProbe probe_gpu() {
  GpuProbe gpu;
  const LoadedLibrary cudart = load_first({"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                           "/usr/local/cuda/lib64/libcudart.so"});
  if (!cudart.handle) {
    gpu.error = "no CUDA runtime library (libcudart) found";
    return gpu;
  }
  gpu.runtime_library = cudart.name;
  using GetInt = int (*)(int*);
  using ErrorString = const char* (*)(int);
  auto device_count = symbol<GetInt>(cudart.handle, "cudaGetDeviceCount");
  auto runtime_version = symbol<GetInt>(cudart.handle, "cudaRuntimeGetVersion");
  auto driver_version = symbol<GetInt>(cudart.handle, "cudaDriverGetVersion");
  auto error_string = symbol<ErrorString>(cudart.handle, "cudaGetErrorString");
  if (!device_count) {
    gpu.error = fmt::format("{} has no cudaGetDeviceCount", cudart.name);
    return gpu;
  }
  if (runtime_version) runtime_version(&gpu.runtime_version);
  if (driver_version) driver_version(&gpu.driver_version);
  int count = 0;
  if (const int code = device_count(&count); code != 0) {
    gpu.error = fmt::format("cudaGetDeviceCount failed: {} (code {})", error_string ? error_string(code) : "error", code);
    return gpu;
  }
  gpu.device_count = count;
  if (count == 0) gpu.error = "cudaGetDeviceCount found no devices";
  name_devices(gpu);
  return gpu;
}

CudaBackend probe_cuda_backend() {
  CudaBackend cuda;
  cuda.built = rt::cuda::is_built();
  cuda.available = rt::cuda::is_available();
  cuda.version = rt::cuda::version_string();
  cuda.reason = rt::cuda::unavailable_reason();
  if (!cuda.available) return cuda;
  for (int i = 0; i < rt::cuda::device_count(); ++i) {
    const rt::cuda::DeviceProperties p = rt::cuda::device_properties(i);
    cuda.devices.push_back({i, p.name, p.major, p.minor, p.total_memory, p.multiprocessors});
  }
  return cuda;
}

std::vector<OptionalPart> probe_optional_parts(const GpuProbe& gpu, const CudaBackend& cuda) {
  const bool has_gpu = gpu.device_count > 0;
  auto prefix = [](bool built, const char* how) {
    return built ? std::string() : fmt::format("needs {}; ", how);
  };
  auto library_text = [](const LoadedLibrary& lib, const char* what) {
    return lib.handle ? fmt::format("{} found", lib.name) : fmt::format("{} not found", what);
  };

  std::vector<OptionalPart> parts;
  parts.push_back({"CUDA", cuda.built, cuda.available, cuda_detail(cuda, gpu)});
  const LoadedLibrary cupti = load_first({"libcupti.so", "libcupti.so.13", "libcupti.so.12"});
  parts.push_back({"CUPTI", kCuptiBuilt, kCuptiBuilt && has_gpu && cupti.handle,
                   prefix(kCuptiBuilt, "the CUDA backend with CUPTI") + library_text(cupti, "libcupti")});
  const LoadedLibrary nccl = load_first({"libnccl.so.2", "libnccl.so"});
  parts.push_back({"NCCL", kNcclBuilt, kNcclBuilt && has_gpu && nccl.handle,
                   prefix(kNcclBuilt, "the CUDA backend with NCCL") + library_text(nccl, "libnccl")});
  const LoadedLibrary mpi = load_first({"libmpi.so.40", "libmpi.so"});
  parts.push_back({"MPI", kMpiBuilt, kMpiBuilt && mpi.handle,
                   prefix(kMpiBuilt, "RT_MPI=ON") + library_text(mpi, "libmpi")});
  const LoadedLibrary gloo = load_first({"libgloo.so", "libgloo.so.0"});
  parts.push_back({"gloo", kGlooBuilt, kGlooBuilt && gloo.handle,
                   prefix(kGlooBuilt, "libgloo-dev and RT_GLOO=AUTO or ON") + library_text(gloo, "libgloo")});
  return parts;
}

}  // namespace rt::cli
