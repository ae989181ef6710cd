// app/cli/optional_parts.h — which optional subsystems (CUDA, CUPTI, NCCL, MPI) this build contains,
// and whether they can be used on this machine, found without a link-time dependency on any of them.
//
//   for (const OptionalPart& part : probe_optional_parts())
//     fmt::print("{}: built={} usable={} ({})\n", part.name, part.built, part.usable, part.detail);
//
// "built" comes from the compile definitions RT_WITH_CUDA / RT_WITH_CUPTI / RT_WITH_NCCL / RT_WITH_MPI,
// which app/cli/CMakeLists.txt sets from the CMake variables of the same names. The GPU check dlopens
// libcudart and calls cudaGetDeviceCount; any failure (no driver, code 35, no library) means "no GPU".
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

struct OptionalPart {
  std::string name;
  bool built = false;
  bool usable = false;
  std::string detail;
};

GpuProbe probe_gpu();
std::vector<OptionalPart> probe_optional_parts(const GpuProbe& gpu);

}  // namespace rt::cli
