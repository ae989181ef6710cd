#include "reduce.h"

#include <algorithm>
#include <string>
#include <vector>

namespace rt::cpu {

ReducePlan ReducePlan::describe(const Shape& sizes, const Shape& dims_in, bool keepdim, const char* op) {
  ReducePlan p;
  const int64_t nd = int64_t(sizes.size());
  std::vector<bool> reduced(size_t(std::max<int64_t>(nd, 1)), false);
  if (dims_in.empty()) {
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (int64_t d : dims_in) {
      const int64_t w = wrap_dim(d, nd, op);
      if (reduced[size_t(w)])
        throw IndexError(std::string(op) + ": dim " + std::to_string(w) + " appears multiple times in the list of dims");
      reduced[size_t(w)] = true;
    }
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (reduced[size_t(d)]) {
      p.dims.push_back(d);
      p.inner *= sizes[size_t(d)];
      p.kept_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.outer *= sizes[size_t(d)];
      p.kept_shape.push_back(sizes[size_t(d)]);
      p.out_shape.push_back(sizes[size_t(d)]);
    }
  }
  return p;
}

uint32_t ReducePlan::dim_mask() const {
  uint32_t m = 0;
  for (int64_t d : dims) m |= 1u << d;
  return m;
}

Shape ReducePlan::permutation(int64_t ndim) const {
  Shape perm;
  perm.reserve(size_t(ndim));
  for (int64_t d = 0; d < ndim; ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) perm.push_back(d);
  for (int64_t d : dims)
    if (d < ndim) perm.push_back(d);
  return perm;
}

TensorView ReducePlan::rows_view(const TensorView& input) const { return input.permuted(permutation(input.ndim)); }

}  // namespace rt::cpu
