// The factories of backends this build left out: each says what builds it (engine/dist/CMakeLists.txt).
#include <fmt/core.h>

#include "rt/dist/process_group.h"

namespace rt::dist {

#ifdef RT_DIST_WITH_GLOO
bool is_gloo_available() { return true; }
#else
bool is_gloo_available() { return false; }
std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store>, int, int, ProcessGroupOptions) {
  throw DistBackendError(
      "the gloo backend is not built into this rustytorch: install libgloo-dev (scripts/setup.sh does) and "
      "reconfigure with -DRT_GLOO=AUTO or ON; the mpi backend also runs CPU collectives when it is built");
}
#endif

#ifndef RT_DIST_WITH_MPI  // built: src/mpi/process_group_mpi.cpp
bool is_mpi_available() { return false; }
std::shared_ptr<ProcessGroup> make_mpi_group(ProcessGroupOptions) {
  throw DistBackendError(
      "the mpi backend is not built into this rustytorch: install libopenmpi-dev and openmpi-bin (scripts/setup.sh "
      "does) and reconfigure with -DRT_MPI=AUTO or ON");
}
#endif

#ifdef RT_DIST_WITH_NCCL
bool is_nccl_available() { return true; }
#else
bool is_nccl_available() { return false; }
std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store>, int, int, ProcessGroupOptions) {
  throw DistBackendError(
      "the nccl backend is not written yet: collectives on CUDA tensors are not supported in this version of "
      "rustytorch. Copy the tensors to the CPU (t.cpu()) and use backend=\"gloo\" or \"mpi\"");
}
#endif

}  // namespace rt::dist
