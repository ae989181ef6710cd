#include "reduce.h"

#include <algorithm>

#include "rt/autograd/grad_mode.h"
#include "rt/ops/view.h"

namespace rt::cpu {

ReducePlan ReducePlan::make(const Tensor& t, const Shape& dims_in, bool keepdim, const char* op) {
  ReducePlan p = describe(t, dims_in, keepdim, op);
  const int64_t nd = t.dim();
  NoGradGuard no_grad;  // layout only; the op records its own backward
  Tensor x = t.detach();
  if (nd > 0 && !p.dims.empty()) {
    Shape perm;
    for (int64_t d = 0; d < nd; ++d)
      if (!std::binary_search(p.dims.begin(), p.dims.end(), d)) perm.push_back(d);
    perm.insert(perm.end(), p.dims.begin(), p.dims.end());
    bool identity = true;
    for (int64_t i = 0; i < nd; ++i) identity &= perm[size_t(i)] == i;
    if (!identity) x = permute(x, perm);
  }
  p.input = contiguous(x);
  return p;
}

ReducePlan ReducePlan::describe(const Tensor& t, const Shape& dims_in, bool keepdim, const char* op) {
  ReducePlan p;
  const int64_t nd = t.dim();
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
      p.inner *= t.sizes()[size_t(d)];
      p.kept_shape.push_back(1);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.outer *= t.sizes()[size_t(d)];
      p.kept_shape.push_back(t.sizes()[size_t(d)]);
      p.out_shape.push_back(t.sizes()[size_t(d)]);
    }
  }
  return p;
}

uint32_t ReducePlan::dim_mask() const {
  uint32_t m = 0;
  for (int64_t d : dims) m |= 1u << d;
  return m;
}

}  // namespace rt::cpu
