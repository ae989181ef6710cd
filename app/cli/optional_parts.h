// app/cli/optional_parts.h — which optional subsystems (CUDA, CUPTI, NCCL, MPI) this build contains,
// and whether they can be used on this machine, found without a link-time dependency on any of them.
//
//   for (const OptionalPart& part : probe_optional_parts(probe_gpu(), probe_cuda_backend()))
//     fmt::print("{}: built={} usable={} ({})\n", part.name, part.built, part.usable, part.detail);
//
// CUDA is reported by the engine (rt/cuda.h: what this rustytorch was built with and can use, which
// needs no CUDA library when it was built without). For the others, "built" comes from the compile
// definitions RT_WITH_CUPTI / RT_WITH_NCCL / RT_WITH_MPI, which app/cli/CMakeLists.txt sets from the
// CMake variables of the same names. probe_gpu() dlopens libcudart and calls cudaGetDeviceCount, so it
// sees GPUs even in a build without CUDA; any failure (no driver, code 35, no library) means "no GPU".
#pragma once
#include <string>
#include <vector>

namespace rt::cli {

struct GpuProbe {
  std::string runtime_library;  // the libcudart that was loaded, empty when none could be
  int runtime_version = 0;      // 13000 for CUDA 13.0
  int driver_version = 0;
  int device_count = 0;
  std::vector<std::string> devices;  // "NVIDIA H200 (140 GiB)"
  std::string error;                 // why there is no GPU, empty when device_count > 0
};

// The engine's CUDA backend (rt::cuda): built, usable, versions, and its devices or why there are none.
struct CudaBackend {
  bool built = false;
  bool available = false;
  std::string version;  // "CUDA 13.0 (runtime), driver 13.0" or "not built"
  struct Device {
    int index = 0;
    std::string name;
    int major = 0, minor = 0;
    size_t total_memory = 0;  // bytes
    int multiprocessors = 0;
  };
  std::vector<Device> devices;  // empty when !available
  std::string reason;           // rt::cuda::unavailable_reason(), empty when available
};

struct OptionalPart {
  std::string name;
  bool built = false;
  bool usable = false;
  std::string detail;
};

GpuProbe probe_gpu();
CudaBackend probe_cuda_backend();
std::vector<OptionalPart> probe_optional_parts(const GpuProbe& gpu, const CudaBackend& cuda);

}  // namespace rt::cli
