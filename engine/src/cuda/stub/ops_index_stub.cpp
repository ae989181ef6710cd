// engine/src/cuda/ops_index.h in a build without CUDA: no tensor can live on a GPU there
// (creating one throws), so these are unreachable; if something calls them anyway, they say so.
#include "cuda/ops_index.h"
#include "rt/error.h"

namespace rt::cuda::ops {
namespace {
[[noreturn]] void not_built(const char* op) {
  throw DeviceError(std::string(op) + " on a CUDA tensor: CUDA support was not built into this rustytorch");
}
}  // namespace

void index_select(const Tensor&, const Tensor&, int64_t, const Tensor&) { not_built("index_select"); }
void gather(const Tensor&, const Tensor&, int64_t, const Tensor&) { not_built("gather"); }
void scatter_add(const Tensor&, int64_t, const Tensor&, const Tensor&) { not_built("scatter_add"); }
void index_add(const Tensor&, int64_t, const Tensor&, const Tensor&) { not_built("index_add"); }

}  // namespace rt::cuda::ops
