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

#ifndef RT_DIST_WITH_NCCL  // built: src/nccl/process_group_nccl.cpp
bool is_nccl_available() { return false; }
std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store>, int, int, ProcessGroupOptions) {
#ifdef RT_DIST_NCCL_EMULATED_CUDA
  throw DistBackendError(
      "the nccl backend is not built into this rustytorch: it was built with the CUDA emulator (RT_CUDA=EMULATED), "
      "which has no GPU for NCCL to drive. Build with the CUDA toolkit (-DRT_CUDA=ON; NCCL comes with it) to run "
      "collectives on CUDA tensors, or copy the tensors to the CPU (t.cpu()) and use backend=\"gloo\" or \"mpi\"");
#else
  throw DistBackendError(
      "the nccl backend is not built into this rustytorch: it needs a CUDA build (-DRT_CUDA=ON or AUTO with nvcc) "
      "and NCCL (nccl.h and libnccl in the CUDA toolkit, or -DRT_NCCL_ROOT=<prefix>), with -DRT_NCCL=AUTO or ON. "
      "Or copy the tensors to the CPU (t.cpu()) and use backend=\"gloo\" or \"mpi\"");
#endif
}
#endif

}  // namespace rt::dist
