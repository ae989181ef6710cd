#include "backend_spec.h"

#include <fmt/core.h>

#include <sstream>

#include "rt/cuda.h"
#include "rt/dist/process_group.h"

namespace rt::dist::detail {

namespace {
bool is_known_backend(const std::string& b) { return b == "gloo" || b == "mpi" || b == "nccl"; }
}  // namespace

std::string BackendSpec::text() const {
  if (cuda.empty()) return cpu;
  if (cpu.empty()) return cuda;
  return "cpu:" + cpu + ",cuda:" + cuda;
}

BackendSpec parse_backend_spec(const std::string& spec) {
  BackendSpec out;
  if (spec.empty()) {
    out.cpu = is_gloo_available() || !is_mpi_available() ? "gloo" : "mpi";
    if (is_nccl_available() && rt::cuda::is_available()) out.cuda = "nccl";
    return out;
  }
  if (spec.find(':') == std::string::npos) {
    if (!is_known_backend(spec))
      throw ValueError(fmt::format("unknown backend '{}': use \"gloo\" or \"mpi\" (CPU tensors), \"nccl\" (CUDA "
                                   "tensors), or one per device as \"cpu:gloo,cuda:nccl\"",
                                   spec));
    (spec == "nccl" ? out.cuda : out.cpu) = spec;
    return out;
  }
  std::stringstream parts(spec);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t colon = part.find(':');
    const std::string device = part.substr(0, colon);
    const std::string backend = colon == std::string::npos ? "" : part.substr(colon + 1);
    if ((device != "cpu" && device != "cuda") || !is_known_backend(backend))
      throw ValueError(fmt::format("backend '{}': '{}' is not DEVICE:BACKEND with DEVICE cpu or cuda and BACKEND gloo, "
                                   "mpi or nccl (e.g. \"cpu:gloo,cuda:nccl\")",
                                   spec, part));
    if ((device == "cpu") == (backend == "nccl"))
      throw ValueError(fmt::format("backend '{}': {} does not run {} tensors (gloo and mpi: cpu; nccl: cuda)", spec,
                                   backend, device));
    (device == "cpu" ? out.cpu : out.cuda) = backend;
  }
  return out;
}

}  // namespace rt::dist::detail
