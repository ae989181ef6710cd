// make_nccl_group where the nccl backend cannot run: not built (the CUDA emulator, no NCCL, no CUDA) or no
// usable GPU. Runs in every build; with a GPU and NCCL there is nothing to refuse (test_nccl_group covers
// that case on the GPU machine).
#include <catch2/catch.hpp>

#include "rt/cuda.h"
#include "rt/dist/process_group.h"

namespace dist = rt::dist;
using Catch::Matchers::Contains;

TEST_CASE("make_nccl_group names what is missing when the backend cannot run") {
  auto store = std::make_shared<dist::HashStore>();
  if (!dist::is_nccl_available()) {
    CHECK_THROWS_AS(dist::make_nccl_group(store, 0, 1), dist::DistBackendError);
    CHECK_THROWS_WITH(dist::make_nccl_group(store, 0, 1), Contains("nccl backend is not built") && Contains("RT_CUDA"));
  } else if (!rt::cuda::is_available()) {
    CHECK_THROWS_AS(dist::make_nccl_group(store, 0, 1), dist::DistBackendError);
    CHECK_THROWS_WITH(dist::make_nccl_group(store, 0, 1),
                      Contains("needs a usable CUDA device") && Contains(rt::cuda::unavailable_reason()));
  } else {
    SUCCEED("NCCL and a GPU are present: tests/dist/test_nccl_group runs the backend");
  }
}
