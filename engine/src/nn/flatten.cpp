#include "rt/nn/flatten.h"

#include "rt/ops/view.h"

namespace rt::nn {

Flatten::Flatten(int64_t start, int64_t end) : Module("Flatten"), start_dim(start), end_dim(end) {}

Tensor Flatten::forward(const Tensor& x) { return rt::flatten(x, start_dim, end_dim); }

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

}  // namespace rt::nn
