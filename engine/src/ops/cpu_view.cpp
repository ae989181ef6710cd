#include "ops/cpu_view.h"

namespace rt {

void throw_too_many_dims_for_cpu_kernel(const Tensor& t) {
  throw NotImplementedError("CPU kernels take tensors of at most " + std::to_string(cpu::kMaxDims) +
                            " dimensions, got shape " + format_shape(t.sizes()) + "; reshape it first");
}

}  // namespace rt
